/**
 * `--only voice`: bench/voice-calls.ts (concurrent simulated calls) is a script of its own rather than a module,
 * so it runs as a child process, once per database, and its report is passed on; the figures it prints (peak
 * concurrent calls, reply latency p99) become rows when they can be read from it.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import type { Benchmark } from "./lib/benchmark.js";
import { benchFile } from "./lib/children.js";
import type { BenchContext } from "./lib/context.js";
import { row, type BenchmarkResult, type Row } from "./lib/report.js";

const run = promisify(execFile);

export const voiceCalls: Benchmark = {
  name: "voice",
  byDefault: false,
  async run(context: BenchContext): Promise<BenchmarkResult> {
    const calls = context.options.quick ? 50 : 200;
    const rows: Row[] = [];
    const notes: string[] = [];
    const details: Record<string, unknown> = {};
    for (const kind of context.options.dbs) {
      const database = kind === "postgres" ? await context.postgresDatabase() : undefined;
      const { stdout } = await run(process.execPath, ["--import", "tsx", benchFile("voice-calls.ts"), String(calls), "6"], {
        env: { ...process.env, ...(database ? { DATABASE_URL: database.url } : {}) },
        timeout: 10 * 60_000,
        maxBuffer: 1 << 20,
      });
      await database?.drop();
      details[kind] = stdout;
      notes.push(...stdout.trim().split("\n").map((line) => `voice [${kind}]: ${line.trim()}`));
      const peak = /peak concurrent ongoing calls: (\d+)/.exec(stdout);
      const p99 = /p99 ([\d.]+) ms/.exec(stdout);
      if (peak) {
        rows.push(row({ benchmark: "voice calls", db: kind, name: "peak concurrent calls", figure: Number(peak[1]), unit: "calls", baseline: calls, baselineLabel: "placed", target: `${Math.min(200, calls)} concurrent` }, { on: "figure", atLeast: Math.min(200, calls) }));
      }
      if (p99) rows.push(row({ benchmark: "voice calls", db: kind, name: "agent reply p99", figure: Number(p99[1]), unit: "ms", target: "< 200 ms" }, { on: "figure", atMost: 200 }));
    }
    return { rows, details, notes };
  },
};
