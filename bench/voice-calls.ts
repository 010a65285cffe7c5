/**
 * How many concurrent simulated calls one instance holds, the agent's reply latency under that load, and the memory
 * a call costs. Figures are printed, not asserted (targets: 200 concurrent calls, p99 reply < 200 ms).
 *
 *   npx tsx bench/voice-calls.ts [calls=200] [turns=6] [turn_ms=2000]
 *
 * `turn_ms` is the pause before each of the simulated caller's lines: 2 s is a brisk human pace; shorter pauses
 * measure throughput rather than a realistic load.
 *
 * Runs on embedded PGlite in memory, or on PostgreSQL when DATABASE_URL is set (use a scratch database).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pino from "pino";
import { createApp } from "../src/app.js";
import { loadConfig } from "../src/config.js";
import { migrate } from "../src/store/migrate.js";
import { openPglite } from "../src/store/pglite-db.js";
import { openPostgres } from "../src/store/postgres-db.js";

const calls = Number(process.argv[2] ?? 200);
const turns = Number(process.argv[3] ?? 6);
const turnMs = Number(process.argv[4] ?? 2000);
const adminKey = "bench-admin-key-0123456789abcdef";
const databaseUrl = process.env.DATABASE_URL;

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const dataDir = await mkdtemp(path.join(tmpdir(), "parley-bench-"));
const db = databaseUrl ? openPostgres(databaseUrl, 20) : await openPglite(undefined);
await migrate(db);
const config = loadConfig({
  ADMIN_API_KEY: adminKey,
  JWT_SECRET: "bench-jwt-secret-0123456789abcdef0123",
  ENCRYPTION_KEY: "bench-encryption-key-0123456789abcdef",
  DATA_DIR: dataDir,
  LOG_LEVEL: "silent",
  // The earlier figure: calls as text exchanges. bench/voice-speech.ts measures calls with real audio.
  SPEECH_MODE: "text",
  ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
});
const app = await createApp(config, { db, logger: pino({ level: "silent" }) });
await app.server.ready();
const inject = async (method: "GET" | "POST", url: string, authorization: string, payload?: unknown) => {
  const response = await app.server.inject({ method, url, headers: { authorization }, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
  if (response.statusCode !== 200 && response.statusCode !== 201) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`);
  return JSON.parse(response.body) as Record<string, unknown>;
};

const script = ["Hello?", ...Array.from({ length: turns - 2 }, (_, i) => (i % 2 === 0 ? "What are your opening hours?" : "Where is the office?")), "Thanks, bye."];
const org = await inject("POST", "/admin/organizations", `Bearer ${adminKey}`, { name: "Bench" });
const apiKey = String(org.api_key);
const project = await inject("POST", `/admin/organizations/${String(org.id)}/projects`, `Bearer ${adminKey}`, {
  name: "bench",
  config: {
    agent: {
      knowledge: [
        { question: "What are your opening hours?", answer: "We are open from 9 to 5 on weekdays." },
        { question: "Where is the office located?", answer: "Our office is at 1 Main Street." },
      ],
    },
    voice: { accounts: [{ id: "6f1f6c43-3b8f-4d9e-9a57-2f0c4f1b7a01", phone_numbers: ["+14155550100"] }], simulated: { script, ring_ms: 200, turn_ms: turnMs } },
  },
});
const threads = await Promise.all(Array.from({ length: calls }, async () => String((await inject("POST", "/threads", apiKey, {})).thread_id)));

global.gc?.();
const baseline = process.memoryUsage();
const started = Date.now();
// Calls arrive spread over one turn, as real ones do; started at one instant they would all speak in lockstep.
const ids = await Promise.all(
  threads.map(async (threadId, index) => {
    await new Promise((resolve) => setTimeout(resolve, (index * turnMs) / calls));
    return String((await inject("POST", `/voice/${threadId}/phone-call`, apiKey, { callee: "+14155552671", project_id: String(project.id) })).id);
  }),
);
const createdIn = Date.now() - started;

let peak = 0;
let peakHeap = baseline.heapUsed;
let peakRss = baseline.rss;
for (;;) {
  const [row] = await db.query<{ live: number; done: number }>(
    "SELECT count(*) FILTER (WHERE status = 'ongoing')::int AS live, count(*) FILTER (WHERE status IN ('ended', 'error'))::int AS done FROM calls WHERE id = ANY($1::text[])",
    [ids],
  );
  if (row!.live > peak) {
    peak = row!.live;
    const memory = process.memoryUsage();
    peakHeap = Math.max(peakHeap, memory.heapUsed);
    peakRss = Math.max(peakRss, memory.rss);
  }
  if (row!.done === calls) break;
  await new Promise((resolve) => setTimeout(resolve, 100));
}
const elapsed = Date.now() - started;

// A reply's latency as the caller hears it: from the end of the caller's line (the agent's previous reply, or the
// moment the call connected, plus the pause before the line) to the reply being stored, queueing included.
const latencies = (
  await db.query<{ ms: number }>(
    `SELECT extract(epoch FROM (m.created_at - coalesce(
              (SELECT max(p.created_at) FROM messages p WHERE p.thread_id = m.thread_id AND p.seq < m.seq AND p.role = 'assistant'
                 AND p.extras->>'call_id' = m.extras->>'call_id'),
              c.started_at))) * 1000 - $2 AS ms
       FROM messages m JOIN calls c ON c.id = m.extras->>'call_id'
      WHERE m.role = 'assistant' AND m.extras->>'call_id' = ANY($1::text[])`,
    [ids, turnMs],
  )
)
  .map((row) => Number(row.ms))
  .sort((a, b) => a - b);
const durations = (
  await db.query<{ ms: number }>("SELECT extract(epoch FROM (ended_at - started_at)) * 1000 AS ms FROM calls WHERE id = ANY($1::text[])", [ids])
)
  .map((row) => Number(row.ms))
  .sort((a, b) => a - b);
const reasons = await db.query<{ reason: string; n: number }>(
  "SELECT coalesce(disconnection_reason, '-') AS reason, count(*)::int AS n FROM calls WHERE id = ANY($1::text[]) GROUP BY 1",
  [ids],
);

const mb = (bytes: number) => (bytes / 1_048_576).toFixed(1);
process.stdout.write(
  [
    `voice calls on ${databaseUrl ? "PostgreSQL" : "PGlite"}: ${calls} calls of ${script.length} caller lines (${turns - 1} agent replies each), ${turnMs} ms before each line`,
    `  created ${calls} calls in ${createdIn} ms; all ended after ${elapsed} ms; outcomes ${reasons.map((r) => `${r.reason}=${r.n}`).join(", ")}`,
    `  peak concurrent ongoing calls: ${peak}; call duration p50 ${percentile(durations, 50).toFixed(0)} ms, max ${percentile(durations, 100).toFixed(0)} ms` +
      ` (the script's pauses alone take ${script.length * turnMs} ms)`,
    `  agent reply latency (end of the caller's line → reply stored), ${latencies.length} replies:` +
      ` p50 ${percentile(latencies, 50).toFixed(1)} ms, p95 ${percentile(latencies, 95).toFixed(1)} ms, p99 ${percentile(latencies, 99).toFixed(1)} ms, max ${percentile(latencies, 100).toFixed(1)} ms`,
    `  memory at peak: heap +${mb(peakHeap - baseline.heapUsed)} MiB, rss +${mb(peakRss - baseline.rss)} MiB;` +
      ` per ongoing call ≈ ${peak > 0 ? ((peakHeap - baseline.heapUsed) / peak / 1024).toFixed(0) : "-"} KiB of heap`,
    "",
  ].join("\n"),
);

await app.close();
await db.close();
await rm(dataDir, { recursive: true, force: true });
