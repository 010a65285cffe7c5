/**
 * `--only voice`: bench/voice-calls.ts (concurrent simulated calls) is a script of its own rather than a module,
 * so it runs as a child process, once per database, and its report is passed on; the figures it prints (peak
 * concurrent calls, reply latency p99) become rows when they can be read from it. bench/voice-speech.ts (real audio)
 * and bench/voice-tools.ts (a turn with a tool) run the same way.
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
    // Real audio, on the offline engines: one run on PGlite (the pipeline does not touch the database per frame).
    const maxConcurrent = context.options.quick ? 4 : 16;
    const { stdout: speech } = await run(process.execPath, ["--import", "tsx", benchFile("voice-speech.ts"), String(maxConcurrent), context.options.quick ? "2" : "4"], {
      timeout: 20 * 60_000,
      maxBuffer: 1 << 20,
    });
    details["speech"] = speech;
    notes.push(...speech.trim().split("\n").filter((line) => !line.startsWith("{")).map((line) => `voice with audio: ${line.trim()}`));
    const latency = /voice turn latency p50 (\d+) ms, p99 (\d+) ms; engines alone (\d+) ms/.exec(speech);
    if (latency) {
      const [, p50 = "0", p99 = "0", engines = "1"] = latency;
      rows.push(row({ benchmark: "voice with audio", db: "pglite", name: "turn latency p50, one call", figure: Number(p50), unit: "ms", baseline: Number(engines), baselineLabel: "engines alone", target: "≤ 600 ms" }, { on: "figure", atMost: 600 }));
      rows.push(row({ benchmark: "voice with audio", db: "pglite", name: "turn latency p99, one call", figure: Number(p99), unit: "ms", target: "≤ 1200 ms" }, { on: "figure", atMost: 1200 }));
    }
    const concurrent = /most concurrent calls with p99 < 1.5 s: (\d+)/.exec(speech);
    if (concurrent) rows.push(row({ benchmark: "voice with audio", db: "pglite", name: "concurrent calls, p99 < 1.5 s", figure: Number(concurrent[1]), unit: "calls", target: "≥ 8" }, { on: "figure", atLeast: 8 }));
    const cpu = [...speech.matchAll(/(\d+) concurrent calls: p50 \d+ ms, p99 \d+ ms, CPU (\d+) ms per call-second/g)].at(-1);
    if (cpu) rows.push(row({ benchmark: "voice with audio", db: "pglite", name: `CPU per call-second at ${cpu[1]} calls`, figure: Number(cpu[2]), unit: "ms" }));
    const idle = /"idle_rss_mb":([\d.]+)/.exec(speech);
    if (idle) rows.push(row({ benchmark: "voice with audio", db: "pglite", name: "resident memory, idle instance", figure: Number(idle[1]), unit: "MB", target: "≤ 300 MB" }, { on: "figure", atMost: 300 }));
    const perCall = [...speech.matchAll(/resident memory: idle \d+ MB, ([\d.]+) MB per active call at (\d+) calls/g)].at(-1);
    if (perCall) rows.push(row({ benchmark: "voice with audio", db: "pglite", name: `resident memory per active call (${perCall[2]} calls)`, figure: Number(perCall[1]), unit: "MB" }));
    // A turn with a tool, through the pipeline: to the filler phrase while the tool runs, and to the answer after it.
    const { stdout: tools } = await run(process.execPath, ["--import", "tsx", benchFile("voice-tools.ts"), context.options.quick ? "3" : "10", "800"], { timeout: 10 * 60_000, maxBuffer: 1 << 20 });
    details["tools"] = tools;
    const toolTurn = /filler phrase p50 (\d+) ms, p99 (\d+) ms; answer p50 (\d+) ms, p99 (\d+) ms/.exec(tools);
    if (toolTurn) {
      const [, fillerP50 = "0", , answerP50 = "0", answerP99 = "0"] = toolTurn;
      rows.push(row({ benchmark: "voice with a tool", db: "-", name: "to the filler phrase p50", figure: Number(fillerP50), unit: "ms", target: "< 1000 ms" }, { on: "figure", atMost: 1000 }));
      rows.push(row({ benchmark: "voice with a tool", db: "-", name: "to the answer p50 (tool 800 ms)", figure: Number(answerP50), unit: "ms" }));
      rows.push(row({ benchmark: "voice with a tool", db: "-", name: "to the answer p99 (tool 800 ms)", figure: Number(answerP99), unit: "ms" }));
    }
    return { rows, details, notes };
  },
};
