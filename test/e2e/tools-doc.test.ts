import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { test } from "node:test";
import { signToolRequest } from "../../src/domain/tools/tool-signature.js";
import { pollUntil } from "../support/polling.js";

const SECRET = "docs-tool-secret-0123456789";

/** The JavaScript block of docs/tools.md's "A receiver in ten lines of Node". */
async function receiverBlock(): Promise<string> {
  const doc = await readFile(new URL("../../docs/tools.md", import.meta.url), "utf8");
  const section = doc.slice(doc.indexOf("## A receiver in ten lines of Node"));
  const block = /^```js\n([\s\S]*?)^```$/m.exec(section)?.[1];
  assert.ok(block, "the section has a js block");
  return block;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (typeof address !== "object" || address === null) throw new Error("no port");
  return address.port;
}

test("docs/tools.md's receiver, run as written, answers a request Parley signed and refuses one it did not", async () => {
  const block = await receiverBlock();
  assert.ok(block.trim().split("\n").length <= 10, "ten lines");
  // Inside the repository, so that `retell-sdk` resolves as it does where the docs say to run it.
  const folder = new URL("../../.tmp/tools-doc/", import.meta.url);
  await mkdir(folder, { recursive: true });
  const file = new URL(`receiver-${process.pid}.mjs`, folder);
  await writeFile(file, block);
  const port = await freePort();
  const child = spawn(process.execPath, [file.pathname], { env: { ...process.env, PARLEY_TOOL_SECRET: SECRET, RECEIVER_PORT: String(port) }, stdio: "ignore" });
  try {
    const body = JSON.stringify({ tool: "book_appointment", arguments: { day: "Tuesday" }, thread_id: "t", conversation_id: 1, message_id: "m", call: null, context: {} });
    const post = (signature: string) =>
      fetch(`http://127.0.0.1:${port}/book`, { method: "POST", headers: { "content-type": "application/json", "x-parley-signature": signature }, body });
    const answer = await pollUntil(() => post(signToolRequest(body, SECRET, Date.now())), (response) => response.status === 200, { what: "the receiver to start", timeoutMs: 10_000 });
    assert.deepEqual(await answer.json(), { tool: "book_appointment", booked: true, day: "Tuesday" });
    assert.equal((await post(signToolRequest(body, "another-secret-0123456789", Date.now()))).status, 401);
    assert.equal((await post(signToolRequest(body, SECRET, Date.now() - 10 * 60_000))).status, 401, "a stale signature is refused");
  } finally {
    child.kill();
    await rm(file, { force: true });
  }
});
