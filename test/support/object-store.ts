import { spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import path from "node:path";
import { freePort, waitUntil } from "./processes.js";

/** s3rver's fixed credentials: it checks every request's signature against them. */
export const objectStoreCredentials = { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" };

export interface ObjectStore {
  /** http://127.0.0.1:PORT, for RECORDINGS_S3_ENDPOINT. */
  endpoint: string;
  bucket: string;
  /** The settings a Parley process needs to keep its recordings in this store, under `prefix`. */
  env(prefix: string): Record<string, string>;
  stop(): Promise<void>;
}

/**
 * A real S3-protocol server (s3rver, from npm) on loopback in a process of its own, with one empty bucket and its
 * data in a temporary folder. Its own process, because its web framework does not load under the tests' TypeScript
 * loader.
 */
export async function startObjectStore(bucket = "recordings"): Promise<ObjectStore> {
  const directory = await mkdtemp(path.join(tmpdir(), "parley-s3rver-"));
  const port = await freePort();
  const cli = path.join(path.dirname(createRequire(import.meta.url).resolve("s3rver/package.json")), "bin/s3rver.js");
  const child = spawn(process.execPath, [cli, "-d", directory, "-a", "127.0.0.1", "-p", String(port), "--silent", "--configure-bucket", bucket], {
    stdio: ["ignore", "ignore", "pipe"],
  });
  let errors = "";
  child.stderr!.on("data", (chunk: Buffer) => (errors += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const endpoint = `http://127.0.0.1:${port}`;
  await Promise.race([
    waitUntil(async () => (await fetch(endpoint)).status < 500, 30_000, `s3rver on ${endpoint}`),
    exited.then(() => {
      throw new Error(`s3rver exited: ${errors}`);
    }),
  ]);
  return {
    endpoint,
    bucket,
    env: (prefix) => ({
      RECORDINGS_URL: `s3://${bucket}/${prefix}`,
      RECORDINGS_S3_ENDPOINT: endpoint,
      RECORDINGS_S3_REGION: "us-east-1",
      RECORDINGS_S3_ACCESS_KEY_ID: objectStoreCredentials.accessKeyId,
      RECORDINGS_S3_SECRET_ACCESS_KEY: objectStoreCredentials.secretAccessKey,
    }),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      await exited;
      await rm(directory, { recursive: true, force: true });
    },
  };
}
