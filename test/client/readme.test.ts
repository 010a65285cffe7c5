import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { knowledgeConfig } from "../support/fixtures.js";
import { forEachDatabase } from "../support/harness.js";

const root = fileURLToPath(new URL("../../", import.meta.url));

/** Runs a TypeScript file in its own Node process, as a user would with tsx; resolves with its output. */
function run(file: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ["--import", "tsx", file], { cwd: root, env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk.toString()));
    child.on("close", (code) => resolve({ code, output }));
  });
}

forEachDatabase("the client's README example", (h) => {
  test("the example in packages/client/README.md runs against a real server", async () => {
    const readme = await readFile(new URL("packages/client/README.md", `file://${root}`), "utf8");
    const example = /```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    assert.ok(example, "the README has a ts example");
    const { apiKey } = await h().organization(knowledgeConfig);
    const baseUrl = await h().server.listen({ port: 0, host: "127.0.0.1" });
    await mkdir(`${root}.tmp`, { recursive: true });
    const file = `${root}.tmp/client-readme-${h().database.name}.ts`;
    await writeFile(file, example.replace('"@parley/client"', JSON.stringify(`${root}packages/client/src/index.ts`)));
    const { code, output } = await run(file, { PARLEY_URL: baseUrl, PARLEY_API_KEY: apiKey });
    assert.equal(code, 0, output);
    assert.match(output, /^reply: We are open from 9 to 5 on weekdays\. id: \S+$/m);
    assert.match(output, /^user: What are your opening hours\?$/m);
    assert.match(output, /^event 2 message\.created$/m);
    assert.match(output, /^invalid: \[ 'query', 'limit' \] Input should be less than or equal to 100$/m);
    assert.match(output, /^streamed equals reply: true$/m);
  });
});
