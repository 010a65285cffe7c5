/**
 * Start-up and memory at rest (`npm run bench -- --only startup-footprint`):
 *  - how long a `parley` admin command takes to start and finish (its usage printout);
 *  - the resident memory of an idle server as `npm start` runs it (package.json's Node flags, the default settings,
 *    so with the default speech engines available but not loaded), 10 s and 30 s after it first answers: on the
 *    embedded database (first start, then a restart on the same data) and on a fresh PostgreSQL database;
 *  - in the same run, the same server with Node's defaults and no freed-memory trimming (MEMORY_TRIM_INTERVAL_MS=0):
 *    the state before issue 26, as the baseline of each figure;
 *  - the time to the first /healthz answer, wall and CPU (the CPU time is what load from elsewhere barely moves);
 *  - the first requests after the idle wait, as the README makes them (a thread, then a chat turn on the demo
 *    project), timed on both, so that a saving that made the first request slow would show;
 *  - the memory 10 s after those requests and GET /readyz, which checks every offline speech engine (as an
 *    orchestrator's readiness probe does).
 * Figures are in docs/deployment.md; on a shared machine they vary by tens of percent.
 */
import { spawn, spawnSync } from "node:child_process";
import { readFile } from "node:fs/promises";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import type { Benchmark } from "./lib/benchmark.js";
import type { BenchContext, DbKind } from "./lib/context.js";
import { row, type BenchmarkResult, type Row } from "./lib/report.js";
import { startScriptNodeFlags } from "./lib/start-script.js";

const cli = fileURLToPath(new URL("../bin/parley.js", import.meta.url));
const secrets = { JWT_SECRET: "bench-jwt-secret-0123456789abcdef0123", ENCRYPTION_KEY: "bench-encryption-key-0123456789abcdef" };
const targetMb: Record<DbKind, number> = { pglite: 300, postgres: 127 };

function cliSeconds(): number {
  const started = process.hrtime.bigint();
  // Without a command the tool prints its usage: the whole start-up, nothing of the server's.
  spawnSync(process.execPath, [...startScriptNodeFlags(), cli], { stdio: "ignore" });
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

async function rssMb(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

/** CPU seconds the process has used (user and system), from /proc: unlike wall time, load from elsewhere barely moves it. */
async function cpuSeconds(pid: number): Promise<number> {
  const fields = (await readFile(`/proc/${pid}/stat`, "utf8")).replace(/^.*\) /, "").split(" ");
  // utime and stime, fields 14 and 15 of stat(5), in clock ticks of 1/100 s.
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function timed(base: string, method: string, path: string, authorization: string, body: unknown): Promise<{ ms: number; json: Record<string, unknown> }> {
  const started = performance.now();
  const response = await fetch(base + path, { method, headers: { authorization, "content-type": "application/json" }, body: JSON.stringify(body) });
  const text = await response.text();
  const ms = performance.now() - started;
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return { ms, json: JSON.parse(text) as Record<string, unknown> };
}

interface IdleServer {
  /** From spawning the process to its first /healthz answer: wall time, and the CPU time the process used. */
  startSeconds: number;
  startCpuSeconds: number;
  at10: number;
  at30: number;
  /** The first POST /threads and the first chat turn after the idle wait (the README's first requests). */
  firstThreadMs: number;
  firstChatMs: number;
  secondChatMs: number;
  /** The API key the first start printed, for the restart. */
  apiKey: string;
  afterReadyz?: number;
  speech?: string;
}

/**
 * `parley serve` with these Node flags and settings, left idle for 30 s after it first answers, then asked the
 * README's first requests (with `apiKey`, or the key a first start prints).
 */
async function idleServer(nodeFlags: string[], env: Record<string, string>, options: { apiKey?: string; readyz?: boolean }): Promise<IdleServer> {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const { SPEECH_MODE: _speechMode, ...inherited } = process.env;
  const started = performance.now();
  const server = spawn(process.execPath, [...nodeFlags, cli, "serve"], {
    env: { ...inherited, ...env, PORT: String(port), HOST: "127.0.0.1", LOG_LEVEL: "warn" },
    stdio: ["ignore", "pipe", "ignore"],
  });
  let printed = "";
  server.stdout.setEncoding("utf8").on("data", (chunk: string) => (printed += chunk));
  const exited = new Promise((resolve) => server.once("exit", resolve));
  try {
    for (;;) {
      if (server.exitCode !== null) throw new Error(`parley serve exited with ${server.exitCode}`);
      const up = await fetch(`${base}/healthz`).then((response) => response.ok, () => false);
      if (up) break;
      await sleep(100);
    }
    const startSeconds = (performance.now() - started) / 1000;
    const startCpuSeconds = await cpuSeconds(server.pid!);
    await sleep(10_000);
    const at10 = await rssMb(server.pid!);
    await sleep(20_000);
    const at30 = await rssMb(server.pid!);
    const apiKey = options.apiKey ?? /API key:\s+(\S+)/.exec(printed)?.[1];
    if (!apiKey) throw new Error("the first start printed no API key");
    const thread = await timed(base, "POST", "/threads", apiKey, { project_name: "demo" });
    const chat = { thread_id: thread.json.thread_id, message: "What are your opening hours?", service_config_name: "demo" };
    const firstChat = await timed(base, "POST", "/chat", apiKey, chat);
    const secondChat = await timed(base, "POST", "/chat", apiKey, chat);
    const result: IdleServer = { startSeconds, startCpuSeconds, at10, at30, firstThreadMs: thread.ms, firstChatMs: firstChat.ms, secondChatMs: secondChat.ms, apiKey };
    if (options.readyz) {
      const readiness = (await (await fetch(`${base}/readyz`)).json()) as { speech?: { engine: string; ok: boolean }[] };
      result.speech = (readiness.speech ?? []).map((engine) => `${engine.engine}${engine.ok ? "" : " (missing)"}`).join(", ");
      await sleep(10_000);
      result.afterReadyz = await rssMb(server.pid!);
    }
    return result;
  } finally {
    server.kill("SIGTERM");
    await exited;
  }
}

export const startupFootprint: Benchmark = {
  name: "startup-footprint",
  byDefault: true,
  async run(context: BenchContext): Promise<BenchmarkResult> {
    const rows: Row[] = [];
    const details: Record<string, unknown> = {};
    const notes: string[] = [];
    const runs = context.options.quick ? 3 : 5;
    const times = Array.from({ length: runs }, cliSeconds).sort((a, b) => a - b);
    rows.push(row({ benchmark: "startup-footprint", db: "-", name: `parley (usage printout), median of ${runs}`, figure: times[Math.floor(runs / 2)]!, unit: "s" }));
    const npmStart = startScriptNodeFlags();
    const before = { MEMORY_TRIM_INTERVAL_MS: "0" };
    for (const kind of context.options.dbs) {
      const fresh = async (): Promise<Record<string, string>> =>
        kind === "pglite" ? { DATA_DIR: await context.tempDir() } : { DATA_DIR: await context.tempDir(), DATABASE_URL: (await context.postgresDatabase()).url, ...secrets };
      const database = await fresh();
      const now = await idleServer(npmStart, database, { readyz: true });
      const baseline = await idleServer([], { ...(await fresh()), ...before }, {});
      const restart = kind === "pglite" ? await idleServer(npmStart, database, { apiKey: now.apiKey }) : undefined;
      // A --quick run leaves out the restart's own baseline: each server here is 40 s or more.
      const restartBaseline = kind === "pglite" && !context.options.quick ? await idleServer([], { ...database, ...before }, { apiKey: now.apiKey }) : undefined;
      details[kind] = { npmStart: now, nodeDefaults: baseline, ...(restart ? { restart, restartNodeDefaults: restartBaseline } : {}), nodeFlags: npmStart };
      const label = "Node defaults, no trim";
      const start = kind === "pglite" ? ", first start" : "";
      const bound = `≤ ${targetMb[kind]} MB`;
      rows.push(
        row({ benchmark: "startup-footprint", db: kind, name: `idle RSS 10 s after start${start}`, figure: now.at10, unit: "MB", baseline: baseline.at10, baselineLabel: label, target: bound }, { on: "figure", atMost: targetMb[kind] }),
        row({ benchmark: "startup-footprint", db: kind, name: `idle RSS 30 s after start${start}`, figure: now.at30, unit: "MB", baseline: baseline.at30, baselineLabel: label, target: bound }, { on: "figure", atMost: targetMb[kind] }),
      );
      if (restart) {
        const restartBefore = restartBaseline ? { baseline: restartBaseline.at30, baselineLabel: label } : {};
        rows.push(row({ benchmark: "startup-footprint", db: kind, name: "idle RSS 30 s after a restart", figure: restart.at30, unit: "MB", ...restartBefore, target: bound }, { on: "figure", atMost: targetMb[kind] }));
      }
      rows.push(
        row({ benchmark: "startup-footprint", db: kind, name: "RSS 10 s after those requests and GET /readyz (speech engines checked)", figure: now.afterReadyz ?? Number.NaN, unit: "MB", target: bound }, { on: "figure", atMost: targetMb[kind] }),
        row({ benchmark: "startup-footprint", db: kind, name: `start to first /healthz answer${start}`, figure: now.startSeconds, unit: "s", baseline: baseline.startSeconds, baselineLabel: label }),
        row({ benchmark: "startup-footprint", db: kind, name: `CPU time to first /healthz answer${start}`, figure: now.startCpuSeconds, unit: "s", baseline: baseline.startCpuSeconds, baselineLabel: label }),
        row({ benchmark: "startup-footprint", db: kind, name: "first POST /threads after 30 s idle", figure: now.firstThreadMs, unit: "ms", baseline: baseline.firstThreadMs, baselineLabel: label }),
        row({ benchmark: "startup-footprint", db: kind, name: "first POST /chat", figure: now.firstChatMs, unit: "ms", baseline: baseline.firstChatMs, baselineLabel: label }),
        row({ benchmark: "startup-footprint", db: kind, name: "second POST /chat", figure: now.secondChatMs, unit: "ms", baseline: baseline.secondChatMs, baselineLabel: label }),
      );
      notes.push(`startup-footprint on ${kind}: npm start runs node ${npmStart.join(" ")}; speech engines available: ${now.speech || "none reported"}.`);
    }
    return { rows, details, notes };
  },
};
