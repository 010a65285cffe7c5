import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { adminKey, testSecrets } from "./harness.js";

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export async function waitUntil(check: () => Promise<boolean>, timeoutMs = 60_000, what = "condition"): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`timed out waiting for ${what}`);
}

export interface ServerProcess {
  url: string;
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** A real Parley server process on PostgreSQL, started as `parley serve` with the test secrets and admin key. */
export async function startServerProcess(databaseUrl: string, env: Record<string, string> = {}): Promise<ServerProcess> {
  const port = await freePort();
  const child = spawn(process.execPath, ["bin/parley.js", "serve"], {
    env: {
      ...process.env,
      ...testSecrets,
      ADMIN_API_KEY: adminKey,
      DATABASE_URL: databaseUrl,
      PORT: String(port),
      HOST: "127.0.0.1",
      LOG_LEVEL: "warn",
      SHUTDOWN_GRACE_MS: "1000",
      // These processes test scale-out, not speech: their calls exchange text lines, as the in-process suites' do.
      SPEECH_MODE: "text",
      ...env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  await Promise.race([
    waitUntil(async () => (await fetch(`${url}/readyz`)).ok, 60_000, `server on ${url}`),
    exited.then((code) => {
      throw new Error(`server exited with ${code}: ${output}`);
    }),
  ]);
  return {
    url,
    child,
    output: () => output,
    exited,
    async stop(signal = "SIGTERM") {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

export async function call(url: string, method: string, path: string, credential?: string, body?: unknown): Promise<{ status: number; json: <T>() => T; text: string }> {
  const response = await fetch(url + path, {
    method,
    headers: { ...(credential ? { authorization: credential } : {}), ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, text, json: <T>() => JSON.parse(text) as T };
}
