/**
 * `npx tsx bench/startup-footprint.ts [--runs N]`: how long a `parley` admin command takes to start and finish, and
 * how much memory an idle server holds, 10 s and 30 s after it answers: on the embedded database (first start, then a
 * restart on the same data) and on PostgreSQL (a fresh database on BENCH_POSTGRES_ADMIN_URL, by default the local
 * server at 127.0.0.1:5432; left out when it is not reachable). Figures are in docs/deployment.md; on a shared
 * machine they vary by tens of percent.
 */
import { randomBytes } from "node:crypto";
import { spawn, spawnSync } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";

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

function rssMb(pid: number): Promise<number> {
  return readFile(`/proc/${pid}/status`, "utf8").then((status) => Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024);
}

/** Resident memory of an idle `parley serve` 10 s and 30 s after its /healthz first answers. */
async function idleRss(env: Record<string, string>): Promise<{ at10: number; at30: number }> {
  const port = await freePort();
  const server = spawn(process.execPath, [cli, "serve"], { env: { ...process.env, ...env, PORT: String(port), HOST: "127.0.0.1", LOG_LEVEL: "warn" }, stdio: "ignore" });
  try {
    for (;;) {
      const up = await fetch(`http://127.0.0.1:${port}/healthz`).then((response) => response.ok, () => false);
      if (up) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    const at10 = await rssMb(server.pid!);
    await new Promise((resolve) => setTimeout(resolve, 20_000));
    return { at10, at30: await rssMb(server.pid!) };
  } finally {
    server.kill("SIGTERM");
    await new Promise((resolve) => server.once("exit", resolve));
  }
}

function line(label: string, rss: { at10: number; at30: number }): string {
  return `${label}: ${rss.at10.toFixed(0)} MB RSS after 10 s, ${rss.at30.toFixed(0)} MB after 30 s`;
}

/** A fresh database on the PostgreSQL server for one measurement, dropped after; undefined when none is reachable. */
async function withPostgresDatabase<T>(work: (url: string) => Promise<T>): Promise<T | undefined> {
  const adminUrl = process.env.BENCH_POSTGRES_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
  const admin = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 2000 });
  try {
    await admin.connect();
  } catch {
    return undefined;
  }
  const name = `parley_footprint_${process.pid}`;
  try {
    await admin.query(`CREATE DATABASE ${name}`);
    const url = new URL(adminUrl);
    url.pathname = `/${name}`;
    return await work(url.toString());
  } finally {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
}

const times = Array.from({ length: runs }, cliSeconds).sort((a, b) => a - b);
console.log(`parley (usage): median ${times[Math.floor(runs / 2)]!.toFixed(2)} s, min ${times[0]!.toFixed(2)} s over ${runs} runs`);
const dataDir = await mkdtemp(path.join(tmpdir(), "parley-footprint-"));
try {
  console.log(line("idle server on PGlite, first start", await idleRss({ DATA_DIR: dataDir })));
  console.log(line("idle server on PGlite, restart    ", await idleRss({ DATA_DIR: dataDir })));
  const secrets = { JWT_SECRET: randomBytes(32).toString("hex"), ENCRYPTION_KEY: randomBytes(32).toString("hex") };
  const postgres = await withPostgresDatabase((url) => idleRss({ DATA_DIR: dataDir, DATABASE_URL: url, ...secrets }));
  console.log(postgres ? line("idle server on PostgreSQL         ", postgres) : "idle server on PostgreSQL: not measured (no PostgreSQL reachable)");
} finally {
  await rm(dataDir, { recursive: true, force: true });
}
