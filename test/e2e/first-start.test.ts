import assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, test } from "node:test";
import { eventually } from "../support/polling.js";

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

interface Running {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** Starts the server the way the README does (`npm start` runs `node bin/parley.js serve`). */
function start(dataDir: string, port: number): Running {
  const env: NodeJS.ProcessEnv = { ...process.env, DATA_DIR: dataDir, PORT: String(port), HOST: "127.0.0.1", LOG_LEVEL: "warn" };
  for (const name of ["DATABASE_URL", "ADMIN_API_KEY", "JWT_SECRET", "ENCRYPTION_KEY"]) delete env[name];
  const child = spawn(process.execPath, ["bin/parley.js", "serve"], { env, stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  child.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, output: () => output, exited };
}

describe("first start on the embedded database, as the README says", () => {
  let dataDir = "";
  after(async () => {
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  test("prints the keys once, the suggested request works, SIGTERM stops cleanly and a restart keeps everything", async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "parley-first-start-"));
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const first = start(dataDir, port);
    await eventually(async () => /admin key:/.test(first.output()) && (await fetch(`${base}/readyz`)).ok, { what: "the first start", timeoutMs: 60_000, intervalMs: 100 });
    const apiKey = /API key:\s+(sk_\S+)/.exec(first.output())?.[1];
    const adminKey = /admin key:\s+(\S+)/.exec(first.output())?.[1];
    assert.ok(apiKey && adminKey, first.output());
    assert.match(first.output(), /curl -s -X POST/);

    const created = await fetch(`${base}/threads`, {
      method: "POST",
      headers: { authorization: apiKey, "content-type": "application/json" },
      body: JSON.stringify({ project_name: "demo" }),
    });
    assert.equal(created.status, 200);
    const { thread_id: threadId } = (await created.json()) as { thread_id: string };
    const chat = await fetch(`${base}/chat`, {
      method: "POST",
      headers: { authorization: apiKey, "content-type": "application/json" },
      body: JSON.stringify({ thread_id: threadId, message: "What are your opening hours?", service_config_name: "demo" }),
    });
    assert.equal(chat.status, 200);
    assert.match(((await chat.json()) as { message: string }).message, /9 am to 5 pm/);
    const admin = await fetch(`${base}/admin/organizations`, {
      method: "POST",
      headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
      body: JSON.stringify({ name: "Second" }),
    });
    assert.equal(admin.status, 201);

    first.child.kill("SIGTERM");
    assert.equal(await first.exited, 0);

    const second = start(dataDir, port);
    try {
      await eventually(async () => (await fetch(`${base}/readyz`)).ok, { what: "readiness", timeoutMs: 60_000, intervalMs: 100 });
      assert.doesNotMatch(second.output(), /API key:/, "keys are printed on the first start only");
      const history = await fetch(`${base}/threads/${threadId}/messages`, { headers: { authorization: apiKey } });
      assert.equal(history.status, 200);
      assert.equal(((await history.json()) as { messages: unknown[] }).messages.length, 2);
    } finally {
      second.child.kill("SIGTERM");
      await second.exited;
    }
  });
});
