/**
 * `npm run bench [-- --quick] [--only name[,name]] [--db postgres,pglite] [--minutes N]`: starts what each benchmark
 * needs, runs it, prints one table and saves it to bench/results/. See docs/benchmarks.md.
 */
import { parseArgs } from "node:util";
import type { Benchmark } from "./lib/benchmark.js";
import { BenchContext, type DbKind } from "./lib/context.js";
import { renderMarkdown, renderTable, saveResults, type Row } from "./lib/report.js";
import { chatAllocation } from "./chat-allocation.js";
import { chatThroughput } from "./chat-throughput.js";
import { concurrentStreams } from "./concurrent-streams.js";
import { historyScale } from "./history-scale.js";
import { messagesPage } from "./messages-page.js";
import { soak } from "./soak.js";
import { speechAccuracy } from "./speech-accuracy.js";
import { startupFootprint } from "./startup-footprint.js";
import { endOfTurn } from "./end-of-turn.js";
import { storePeer } from "./store-peer.js";
import { storeTurns } from "./store-turns.js";
import { timeToFirstToken } from "./ttft.js";
import { voiceCalls } from "./voice.js";
import { retellSocket } from "./retell-socket.js";
import { twilioMedia } from "./twilio-media.js";

const benchmarks: Benchmark[] = [messagesPage, chatThroughput, chatAllocation, timeToFirstToken, historyScale, concurrentStreams, storeTurns, storePeer, soak, voiceCalls, retellSocket, twilioMedia, speechAccuracy, endOfTurn, startupFootprint];

const usage = `npm run bench -- [options]
  --quick              short windows and smaller data (a 1–2 minute smoke run)
  --only a,b           run only these: ${benchmarks.map((b) => b.name).join(", ")}
  --db postgres,pglite databases to run on (default both)
  --minutes N          soak length (default 10; 1 with --quick)
  --markdown           print the table as Markdown (for docs/benchmarks.md)`;

const { values } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    only: { type: "string" },
    db: { type: "string", default: "postgres,pglite" },
    minutes: { type: "string" },
    markdown: { type: "boolean", default: false },
    help: { type: "boolean", default: false },
  },
});
if (values.help) {
  process.stdout.write(`${usage}\n`);
  process.exit(0);
}
const only = values.only?.split(",").map((name) => name.trim()).filter(Boolean);
const unknown = only?.filter((name) => !benchmarks.some((b) => b.name === name)) ?? [];
const dbs = (values.db ?? "").split(",").map((name) => name.trim()) as DbKind[];
if (unknown.length > 0 || dbs.some((kind) => kind !== "postgres" && kind !== "pglite")) {
  process.stderr.write(`unknown benchmark or database: ${[...unknown, ...dbs.filter((k) => k !== "postgres" && k !== "pglite")].join(", ")}\n${usage}\n`);
  process.exit(2);
}
const options = { quick: values.quick ?? false, dbs, minutes: Number(values.minutes ?? (values.quick ? 1 : 10)) };
const selected = benchmarks.filter((b) => (only ? only.includes(b.name) : b.byDefault));

const context = new BenchContext(options);
const stopOnSignal = () => void context.close().finally(() => process.exit(130));
process.once("SIGINT", stopOnSignal);
process.once("SIGTERM", stopOnSignal);

const rows: Row[] = [];
const details: Record<string, unknown> = {};
const notes: string[] = [];
const started = performance.now();
try {
  for (const benchmark of selected) {
    const began = performance.now();
    process.stderr.write(`▶ ${benchmark.name}…\n`);
    try {
      const result = await benchmark.run(context);
      rows.push(...result.rows);
      details[benchmark.name] = { ...result.details, seconds: (performance.now() - began) / 1000 };
      notes.push(...result.notes);
    } catch (error) {
      notes.push(`${benchmark.name} failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    } finally {
      await context.close();
    }
    process.stderr.write(`  ${benchmark.name} took ${((performance.now() - began) / 1000).toFixed(0)} s\n`);
  }
} finally {
  await context.close();
}

process.stdout.write(`\n${values.markdown ? renderMarkdown(rows) : renderTable(rows)}\n`);
if (notes.length > 0) process.stdout.write(`\nNotes:\n${notes.map((note) => `- ${note}`).join("\n")}\n`);
const file = await saveResults({ options: { ...options, only: only ?? null }, rows, details, notes });
process.stdout.write(`\n${selected.length} benchmarks in ${((performance.now() - started) / 1000).toFixed(0)} s; saved ${file}\n`);
if (notes.some((note) => note.includes(" failed: "))) process.exitCode = 1;
