/**
 * `npx tsx bench/startup-footprint.ts [--runs N]`: how long a `parley` admin command takes to start and finish, and
 * how much memory an idle server holds on the embedded database (first start, then a restart on the same data).
 * Figures are in docs/deployment.md; on a shared machine they vary by tens of percent.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";

const { values } = parseArgs({ options: { runs: { type: "string", default: "5" } } });
const runs = Number(values.runs);
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
const cli = path.join(root, "bin/parley.js");

function cliSeconds(): number {
  const started = process.hrtime.bigint();
  // Without a command the tool prints its usage: the whole start-up, nothing of the server's.
  spawnSync(process.execPath, [cli], { stdio: "ignore" });
  return Number(process.hrtime.bigint() - started) / 1e9;
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

async function idleRssMb(dataDir: string): Promise<number> {
  const port = await freePort();
  const env = { ...process.env, DATA_DIR: dataDir, PORT: String(port), HOST: "127.0.0.1", LOG_LEVEL: "warn" };
  const server = spawn(process.execPath, [cli, "serve"], { env, stdio: "ignore" });
  for (;;) {
    const up = await fetch(`http://127.0.0.1:${port}/healthz`).then((response) => response.ok, () => false);
    if (up) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  await new Promise((resolve) => setTimeout(resolve, 10_000));
  const status = await readFile(`/proc/${server.pid}/status`, "utf8");
  server.kill("SIGTERM");
  await new Promise((resolve) => server.once("exit", resolve));
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

const times = Array.from({ length: runs }, cliSeconds).sort((a, b) => a - b);
console.log(`parley (usage): median ${times[Math.floor(runs / 2)]!.toFixed(2)} s, min ${times[0]!.toFixed(2)} s over ${runs} runs`);
const dataDir = await mkdtemp(path.join(tmpdir(), "parley-footprint-"));
try {
  console.log(`idle server on PGlite, first start: ${(await idleRssMb(dataDir)).toFixed(0)} MB RSS`);
  console.log(`idle server on PGlite, restart:     ${(await idleRssMb(dataDir)).toFixed(0)} MB RSS`);
} finally {
  await rm(dataDir, { recursive: true, force: true });
}
