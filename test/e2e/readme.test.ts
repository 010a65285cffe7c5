import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { demoProjectConfig } from "../../src/domain/organizations/first-start.js";
import { forEachDatabase } from "../support/harness.js";


/** The README's `sh` blocks that talk to a running server: those using `$BASE`, in their order in the file. */
async function readmeExamples(): Promise<string[]> {
  const readme = await readFile(new URL("../../README.md", import.meta.url), "utf8");
  return [...readme.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((match) => match[1] ?? "").filter((block) => block.includes("$BASE"));
}

function bash(script: string, cwd: string, env: Record<string, string>, timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-s"], { cwd, env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(script);
  });
}

// About 20 s (a whole phone call and its analysis among them), using only endpoints that the rest of the suite covers
// on both databases: run on the embedded database, where a newcomer runs them.
forEachDatabase("the README's examples", (h) => {
  test("run as written, on a server at a random port, and show what the README says they show", { timeout: 90_000 }, async () => {
    const examples = await readmeExamples();
    assert.ok(examples.length >= 4, `found ${examples.length} example blocks`);
    assert.ok(examples.every((block) => !/localhost:8000|websocat/.test(block)), "no fixed port and no websocat");
    const { apiKey, projectId } = await h().organization(demoProjectConfig, "demo");
    const address = await h().server.listen({ port: 0, host: "localhost" });
    const port = new URL(address).port;
    const cwd = await mkdtemp(path.join(tmpdir(), "parley-readme-"));
    try {
      const env = { PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? ""}`, HOME: cwd, PORT: port, KEY: apiKey, PROJECT: projectId };
      const run = await bash(`set -euo pipefail\n${examples.join("\n")}`, cwd, env, 80_000);
      assert.equal(run.code, 0, `bash failed: ${run.stderr}\n${run.stdout}`);
      for (const expected of [
        '"message":"We are open Monday to Friday, 9 am to 5 pm."',
        '"message":"Your name is Ada."',
        '{"token":"A ","index":0}',
        "event: token",
        '"message":"Thank you: Tuesday at 3 pm, noted in this conversation.',
        '"status": "ended"',
        "agent: We are open Monday to Friday, 9 am to 5 pm.",
        "call ended: user_hangup",
      ]) {
        assert.ok(run.stdout.includes(expected), `the output shows ${expected}:\n${run.stdout}`);
      }
      const recording = await readFile(path.join(cwd, "call.wav"));
      assert.equal(recording.subarray(0, 4).toString(), "RIFF");
    } finally {
      await rm(cwd, { recursive: true, force: true });
    }
  });
}, {}, "pglite");
