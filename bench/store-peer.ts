/**
 * 7. The chat turn's store cost beside a peer, all on the same PostgreSQL in the same run, at the same concurrency:
 * - Parley's TurnsStore (lease, user message, conversation, events, usage, release) on the current schema, with the
 *   search index's pending list merged meanwhile (its cost is the turn's too), and on the schema before migration 010
 *   (the trigram index on `messages`, its pending list merged by whichever insert found it full);
 * - Mastra's PostgreSQL store (`@mastra/pg` 0.17.10 with `@mastra/core` 0.24.9, the newest releases that run on
 *   Node 20): `saveMessages` of the user's message and the reply;
 * - a minimal baseline: the two messages inserted in one transaction with plain SQL (no lease, events or usage);
 * - the bare writes of a turn (see `skeletonTurn`): what a turn that keeps Parley's promises cannot do without.
 * Each side runs in windows taken in turns; WAL bytes per turn come from `pg_stat_wal` around each window (cluster-
 * wide: the least of the windows is reported, the one least disturbed by other work). The search freshness delay is
 * sampled during the current schema's windows: how long after its commit a message is found through the trigram index.
 * Then the latest 20 messages of a 100,000-message thread: Parley's MessagesStore, Mastra's read, and plain SQL.
 */
import { randomUUID } from "node:crypto";
import { PostgresStore } from "@mastra/pg";
import pg from "pg";
import pino from "pino";
import { uuidv7 } from "../src/domain/shared/ids.js";
import type { Db } from "../src/domain/shared/database.js";
import { MessagesStore } from "../src/store/messages-store.js";
import { migrate } from "../src/store/migrate.js";
import { Notifier } from "../src/store/notifier.js";
import { openPostgres } from "../src/store/postgres-db.js";
import { SearchIndexMerger } from "../src/store/search-index-merger.js";
import { PostgresThreadLocks } from "../src/store/thread-locks.js";
import { TurnsStore } from "../src/store/turns-store.js";
import type { Benchmark } from "./lib/benchmark.js";
import { fillThread } from "./lib/bulk.js";
import { builtinAnswer, chatQuestion, type BenchContext } from "./lib/context.js";
import { row, type BenchmarkResult, type Row } from "./lib/report.js";
import { closedLoop, interleaved, merge, sleep, summarize, type Window } from "./lib/stats.js";

const concurrency = 32;
const poolSize = 20;
const historySize = 100_000;
const quickHistorySize = 20_000;
const beforeMigration = "006_event_retention.sql";
const mergeIntervalMs = 200;

interface Side {
  name: string;
  turn: (worker: number) => Promise<void>;
  /** Runs beside the side's windows (the search index merger, the freshness probe); returns its stop. */
  beside?: () => () => Promise<void>;
  /** Runs after each of its windows, unmeasured. */
  afterWindow?: () => Promise<unknown>;
}

interface SideResult {
  window: Omit<Window, "samples">;
  walBytesPerTurn: number;
  walWindows: number[];
}

async function walBytes(client: pg.Client): Promise<number> {
  const result = await client.query<{ bytes: string }>("SELECT wal_bytes::text AS bytes FROM pg_stat_wal");
  return Number(result.rows[0]?.bytes ?? 0);
}

/** A Parley database at `until` (or the newest schema) with one organization, project and `count` threads. */
async function parleyDatabase(context: BenchContext, count: number, until?: string): Promise<{ url: string; db: Db; projectId: string; organizationId: string; threads: string[] }> {
  const { url } = await context.postgresDatabase();
  const db = openPostgres(url, poolSize);
  context.defer(() => db.close());
  await migrate(db, until);
  const organizationId = randomUUID();
  const projectId = randomUUID();
  await db.query("INSERT INTO organizations (id, name) VALUES ($1, 'bench')", [organizationId]);
  await db.query("INSERT INTO projects (id, organization_id, name) VALUES ($1, $2, 'bench')", [projectId, organizationId]);
  const threads = await addThreads({ db, organizationId, projectId }, count);
  return { url, db, projectId, organizationId, threads };
}

/** `count` new threads of the database's organization and project; with `conversation`, each with conversation 1 active. */
async function addThreads(database: { db: Db; organizationId: string; projectId: string }, count: number, conversation = false): Promise<string[]> {
  const threads: string[] = [];
  for (let i = 0; i < count; i++) {
    const threadId = uuidv7();
    const active = conversation ? 1 : null;
    await database.db.query(
      "INSERT INTO threads (id, organization_id, type, timezone, project_id, active_conversation_id, last_conversation_id) VALUES ($1, $2, 'NORMAL', 'UTC', $3, $4, $5)",
      [threadId, database.organizationId, database.projectId, active, active ?? 0],
    );
    if (conversation) await database.db.query("INSERT INTO conversations (thread_id, conversation_id) VALUES ($1, 1)", [threadId]);
    threads.push(threadId);
  }
  return threads;
}

/** The store's part of a chat turn, as ChatService drives it (bench/store-turns.ts measures the same on its own). */
function parleyTurn(context: BenchContext, database: { url: string; db: Db; projectId: string; threads: string[] }): (worker: number) => Promise<void> {
  const locks = new PostgresThreadLocks(database.db, database.url);
  const notifier = new Notifier(database.db);
  context.defer(() => locks.close());
  context.defer(() => notifier.close());
  const turns = new TurnsStore(database.db, notifier);
  return (worker) =>
    locks.withLeasedWork(database.threads[worker]!, async (lease) => {
      const threadId = database.threads[worker]!;
      const userMessage = { id: uuidv7(), content: chatQuestion, extras: { user_type: "user" } };
      const { conversationId } = await turns.open({ threadId, projectId: database.projectId, startNewConversation: false, userMessage, historyLimit: 41 }, lease);
      await turns.close({ threadId, conversationId, reply: { id: uuidv7(), content: builtinAnswer, extras: { provider: "builtin" } }, priceUsd: 0.002 }, lease);
    });
}

/**
 * How long after its commit a message is found through the trigram index: a probe stores a message with a word of its
 * own on a thread of its own every 50 ms, without waiting for the ones before it to be found, and a poller searches
 * every 5 ms for the probes still waiting, by their word alone (the index is the only way to it but a scan of every
 * message), some 200 samples in all.
 */
function freshnessProbe(database: { db: Db }, probeThread: string, samples: number[]): () => () => Promise<void> {
  let seq = 0;
  return () => {
    let stopped = false;
    const waiting = new Map<string, number>();
    const storing = (async () => {
      while (!stopped) {
        seq += 1;
        const word = `probe${randomUUID().replaceAll("-", "")}`;
        await database.db.query("UPDATE threads SET last_message_seq = $2 WHERE id = $1", [probeThread, seq]);
        await database.db.query("INSERT INTO messages (id, thread_id, seq, conversation_id, role, content) VALUES ($1, $2, $3, 1, 'user', $4)", [uuidv7(), probeThread, seq, `a ${word} here`]);
        waiting.set(word, performance.now());
        await sleep(50);
      }
    })();
    const polling = (async () => {
      while (!stopped || waiting.size > 0) {
        for (const [word, committed] of waiting) {
          const found = await database.db.query("SELECT 1 FROM messages WHERE content ILIKE $1", [`%${word}%`]);
          if (found.length === 0) continue;
          samples.push(performance.now() - committed);
          waiting.delete(word);
        }
        await sleep(5);
      }
    })();
    return async () => {
      stopped = true;
      await storing;
      await polling;
    };
  };
}

/**
 * What any turn of Parley's must write, bare: two durable statements (the question before the model is asked, the
 * reply after), each numbering the message and its event on the thread row, inserting the message (with its indexes,
 * the trigram index's pending list included) and its `message.created` event. No lease, conversation lookup, history,
 * usage, notification, function call or trigger: the ceiling of a turn that keeps those promises, on this machine.
 */
async function skeletonTurn(database: { db: Db; organizationId: string; projectId: string }): Promise<(worker: number) => Promise<void>> {
  const threads = await addThreads(database, concurrency, true);
  // As Parley's writer does, the statement keeps the insert trigger of `messages` from firing (migration 014).
  const store = `WITH writer AS (SELECT set_config('parley.message_writer', 'on', true)),
                      counters AS (UPDATE threads SET last_message_seq = last_message_seq + 1, last_event_seq = last_event_seq + 1
                                    WHERE id = $1 RETURNING last_message_seq, last_event_seq),
                      message AS (INSERT INTO messages (id, thread_id, seq, conversation_id, role, content)
                                  SELECT $2, $1, counters.last_message_seq, 1, $3, $4 FROM counters, writer)
                 INSERT INTO thread_events (thread_id, seq, type, message_seq)
                 SELECT $1, counters.last_event_seq, 'message.created', counters.last_message_seq FROM counters`;
  return async (worker) => {
    const threadId = threads[worker]!;
    await database.db.query(store, [threadId, uuidv7(), "user", chatQuestion]);
    await database.db.query(store, [threadId, uuidv7(), "assistant", builtinAnswer]);
  };
}

function minimalTurn(pool: pg.Pool): (worker: number) => Promise<void> {
  const seqs = new Map<number, number>();
  return async (worker) => {
    const threadId = `minimal-${worker}`;
    const seq = (seqs.get(worker) ?? 0) + 2;
    seqs.set(worker, seq);
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      await client.query({
        name: "minimal_insert",
        text: "INSERT INTO messages (id, thread_id, seq, role, content) VALUES ($1, $2, $3, 'user', $4), ($5, $2, $6, 'assistant', $7)",
        values: [uuidv7(), threadId, seq - 1, chatQuestion, uuidv7(), seq, builtinAnswer],
      });
      await client.query("COMMIT");
    } catch (error) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  };
}

type MastraMessage = Parameters<PostgresStore["saveMessages"]>[0]["messages"][number];

function mastraMessage(threadId: string, role: "user" | "assistant", text: string, createdAt = new Date()): MastraMessage {
  return { id: randomUUID(), threadId, resourceId: "bench", role, createdAt, type: "v2", content: { format: 2, parts: [{ type: "text", text }], content: text } } as MastraMessage;
}

async function mastraStore(context: BenchContext, threads: number): Promise<{ store: PostgresStore; url: string; threads: string[] }> {
  const { url } = await context.postgresDatabase();
  const store = new PostgresStore({ connectionString: url, max: poolSize });
  await store.init();
  context.defer(() => store.close());
  const ids: string[] = [];
  for (let i = 0; i < threads; i++) {
    const id = randomUUID();
    const now = new Date();
    await store.saveThread({ thread: { id, resourceId: "bench", title: "bench", metadata: {}, createdAt: now, updatedAt: now } });
    ids.push(id);
  }
  return { store, url, threads: ids };
}

/** Every side's windows in turns, `rounds` each, with the WAL each window wrote. */
async function measureSides(context: BenchContext, sides: Side[], wal: pg.Client): Promise<Map<string, SideResult>> {
  const timing = context.timing;
  const windows = new Map<string, { windows: Window[]; wal: number[] }>(sides.map((side) => [side.name, { windows: [], wal: [] }]));
  for (let round = 0; round < timing.rounds; round++) {
    for (const side of sides) {
      const stopBeside = side.beside?.();
      const window = { warmupMs: round === 0 ? timing.warmupMs : 1000, durationMs: timing.durationMs / timing.rounds };
      let startWal = 0;
      let completedAtStart = 0;
      let completed = 0;
      const result = await Promise.all([
        closedLoop({ concurrency, ...window }, async (worker) => {
          await side.turn(worker);
          completed += 1;
        }),
        (async () => {
          await sleep(window.warmupMs);
          startWal = await walBytes(wal);
          completedAtStart = completed;
        })(),
      ]).then(([measured]) => measured);
      const endWal = await walBytes(wal);
      await stopBeside?.();
      await side.afterWindow?.();
      const entry = windows.get(side.name)!;
      entry.windows.push(result);
      entry.wal.push((endWal - startWal) / Math.max(1, completed - completedAtStart));
    }
  }
  return new Map(
    [...windows].map(([name, entry]) => [name, { window: merge(entry.windows), walBytesPerTurn: Math.min(...entry.wal), walWindows: entry.wal }]),
  );
}


export const storePeer: Benchmark = {
  name: "store-peer",
  byDefault: true,
  async run(context: BenchContext): Promise<BenchmarkResult> {
    if (!context.options.dbs.includes("postgres")) return { rows: [], details: {}, notes: ["store-peer runs on PostgreSQL only"] };
    const after = await parleyDatabase(context, concurrency + 1);
    const before = await parleyDatabase(context, concurrency, beforeMigration);
    const mastra = await mastraStore(context, concurrency);
    const minimal = await context.postgresDatabase();
    const minimalPool = new pg.Pool({ connectionString: minimal.url, max: poolSize });
    // An idle connection ended by the database (its drop at the end of the run) must not end the process.
    minimalPool.on("error", () => undefined);
    context.defer(() => minimalPool.end());
    await minimalPool.query(
      "CREATE TABLE messages (id text PRIMARY KEY, thread_id text NOT NULL, seq bigint NOT NULL, role text NOT NULL, content text NOT NULL, created_at timestamptz NOT NULL DEFAULT now(), UNIQUE (thread_id, seq))",
    );
    const wal = new pg.Client({ connectionString: minimal.url });
    wal.on("error", () => undefined);
    await wal.connect();
    context.defer(() => wal.end());

    const merger = new SearchIndexMerger(after.db, mergeIntervalMs, pino({ level: "silent" }));
    const probeThread = after.threads.pop()!;
    const freshness: number[] = [];
    const probe = freshnessProbe(after, probeThread, freshness);
    const sides: Side[] = [
      {
        name: "parley",
        turn: parleyTurn(context, after),
        beside: () => {
          merger.start();
          const stopProbe = probe();
          return async () => {
            await stopProbe();
            await merger.stop();
          };
        },
      },
      // The turn's own path on the current schema: the pending list is merged after the window.
      { name: "parley-path", turn: parleyTurn(context, after), afterWindow: () => merger.merge() },
      { name: "parley-before", turn: parleyTurn(context, before) },
      {
        name: "mastra",
        turn: (worker) =>
          mastra.store.saveMessages({ messages: [mastraMessage(mastra.threads[worker]!, "user", chatQuestion), mastraMessage(mastra.threads[worker]!, "assistant", builtinAnswer)], format: "v2" }).then(() => undefined),
      },
      // On Parley's database, through its pool (the sides take turns): a database of its own was one pool too many
      // for PostgreSQL's default of 100 connections. Its trigrams are merged after its windows, as the path's are.
      { name: "skeleton", turn: await skeletonTurn(after), afterWindow: () => merger.merge() },
      { name: "minimal", turn: minimalTurn(minimalPool) },
    ];
    const results = await measureSides(context, sides, wal);
    process.stderr.write(`  store-peer turns: ${JSON.stringify(Object.fromEntries([...results].map(([name, side]) => [name, { perSecond: side.window.perSecond, errors: side.window.errors, wal: side.walWindows }])))}\n`);
    process.stderr.write(`  store-peer freshness: ${JSON.stringify(summarize(freshness))}\n`);
    const result = (name: string) => results.get(name)!;
    const fresh = summarize(freshness);

    // Latest 20 of 100,000 messages (20,000 with --quick): Parley's thread filled in SQL, Mastra's through its own saveMessages.
    const size = context.options.quick ? quickHistorySize : historySize;
    const historyThread = (await addThreads(after, 1))[0]!;
    await fillThread((sql, params) => after.db.query(sql, params), historyThread, after.projectId, size);
    const mastraThread = mastra.threads[0]!;
    const start = Date.now() - size * 1000;
    for (let offset = 0; offset < size; offset += 1000) {
      const batch = Array.from({ length: 1000 }, (_, i) => mastraMessage(mastraThread, i % 2 === 0 ? "user" : "assistant", i % 2 === 0 ? chatQuestion : builtinAnswer, new Date(start + (offset + i) * 1000)));
      await mastra.store.saveMessages({ messages: batch, format: "v2" });
    }
    const mastraDirect = new pg.Client({ connectionString: mastra.url });
    mastraDirect.on("error", () => undefined);
    await mastraDirect.connect();
    context.defer(() => mastraDirect.end());
    const parleyDirect = new pg.Client({ connectionString: after.url });
    parleyDirect.on("error", () => undefined);
    await parleyDirect.connect();
    // Every database of the run indexed and vacuumed before the reads, so that no autovacuum of the turns' tables (the
    // trigram index of the schema before 010 takes seconds) runs under them.
    await merger.merge();
    await parleyDirect.query("VACUUM ANALYZE");
    await mastraDirect.query("VACUUM ANALYZE");
    await before.db.query("VACUUM ANALYZE");
    await minimalPool.query("VACUUM ANALYZE");
    context.defer(() => parleyDirect.end());
    const messages = new MessagesStore(after.db);
    await parleyDirect.query("CHECKPOINT");
    const reads = await interleaved(context.timing.samples, 10, {
      parley: () => messages.olderThanOrAt(historyThread, null, 20),
      parleyPlain: () =>
        parleyDirect.query({ name: "plain", text: "SELECT id, seq, conversation_id, role, content, extras, created_at FROM messages WHERE thread_id = $1 ORDER BY seq DESC LIMIT 20", values: [historyThread] }),
      mastra: () => mastra.store.getMessages({ threadId: mastraThread, selectBy: { last: 20 }, format: "v2" }),
      mastraPlain: () =>
        mastraDirect.query({ name: "plain", text: 'SELECT * FROM mastra_messages WHERE thread_id = $1 ORDER BY "createdAt" DESC LIMIT 20', values: [mastraThread] }),
    });
    const latest = { parley: summarize(reads.parley), parleyPlain: summarize(reads.parleyPlain), mastra: summarize(reads.mastra), mastraPlain: summarize(reads.mastraPlain) };

    const parleyRate = result("parley").window.perSecond;
    const label = "7 store vs peer";
    const rows: Row[] = [
      row({ benchmark: label, db: "postgres", name: `turn saved/s, Parley TurnsStore, ${concurrency} threads`, figure: parleyRate, unit: "turns/s", baseline: result("mastra").window.perSecond, baselineLabel: "Mastra saveMessages", target: "≥ 2× Mastra" }, { on: "ratio", atLeast: 2 }),
      row({ benchmark: label, db: "postgres", name: `turn saved/s, Parley TurnsStore, ${concurrency} threads`, figure: parleyRate, unit: "turns/s", baseline: result("minimal").window.perSecond, baselineLabel: "2 rows in 1 transaction", target: "≥ 60% of minimal" }, { on: "ratio", atLeast: 0.6 }),
      row({ benchmark: label, db: "postgres", name: "turn saved/s, Parley, pending list merged after the window", figure: result("parley-path").window.perSecond, unit: "turns/s", baseline: result("minimal").window.perSecond, baselineLabel: "2 rows in 1 transaction" }),
      row({ benchmark: label, db: "postgres", name: "turn saved/s, bare writes of a turn (2 statements)", figure: result("skeleton").window.perSecond, unit: "turns/s", baseline: result("minimal").window.perSecond, baselineLabel: "2 rows in 1 transaction" }),
      row({ benchmark: label, db: "postgres", name: "turn saved/s, Parley before migration 010", figure: result("parley-before").window.perSecond, unit: "turns/s", baseline: result("minimal").window.perSecond, baselineLabel: "2 rows in 1 transaction" }),
      { ...row({ benchmark: label, db: "postgres", name: "turn saved/s, Mastra saveMessages", figure: result("mastra").window.perSecond, unit: "turns/s", baseline: result("minimal").window.perSecond, baselineLabel: "2 rows in 1 transaction" }), verdict: "peer" },
      row({ benchmark: label, db: "postgres", name: "WAL bytes per turn, Parley (merges included)", figure: result("parley").walBytesPerTurn, unit: "B", baseline: result("parley-before").walBytesPerTurn, baselineLabel: "before 010" }),
      row({ benchmark: label, db: "postgres", name: "WAL bytes per turn, Parley's turn path alone", figure: result("parley-path").walBytesPerTurn, unit: "B", baseline: result("parley-before").walBytesPerTurn, baselineLabel: "before 010" }),
      row({ benchmark: label, db: "postgres", name: "WAL bytes per turn, minimal", figure: result("minimal").walBytesPerTurn, unit: "B" }),
      { ...row({ benchmark: label, db: "postgres", name: "WAL bytes per turn, Mastra", figure: result("mastra").walBytesPerTurn, unit: "B", baseline: result("minimal").walBytesPerTurn, baselineLabel: "minimal" }), verdict: "peer" },
      row({ benchmark: label, db: "postgres", name: "search freshness delay, p99", figure: fresh.p99, unit: "ms", baseline: fresh.p50, baselineLabel: "p50", target: "≤ 1,000 ms", withoutRatio: true }, { on: "figure", atMost: 1000 }),
      row({ benchmark: label, db: "postgres", name: `latest 20 of ${size / 1000}k, Parley p50`, figure: latest.parley.p50, unit: "ms", baseline: latest.parleyPlain.p50, baselineLabel: "plain SQL", target: "≤ 1.2× plain SQL" }, { on: "ratio", atMost: 1.2 }),
      { ...row({ benchmark: label, db: "postgres", name: `latest 20 of ${size / 1000}k, Mastra p50`, figure: latest.mastra.p50, unit: "ms", baseline: latest.mastraPlain.p50, baselineLabel: "its plain SQL" }), verdict: "peer" },
    ];
    const errors = [...results].filter(([, side]) => side.window.errors > 0).map(([name, side]) => `${name}: ${side.window.errors} errors (${side.window.firstError ?? ""})`);
    const notes = [
      `store-peer: WAL bytes per turn by window (pg_stat_wal is cluster-wide; the least is reported): ${[...results].map(([name, side]) => `${name} ${side.walWindows.map((bytes) => bytes.toFixed(0)).join("/")}`).join(", ")}`,
      `store-peer: search freshness over ${fresh.count} probes: p50 ${fresh.p50.toFixed(0)} ms, p99 ${fresh.p99.toFixed(0)} ms, max ${fresh.max.toFixed(0)} ms (pending list merged every ${mergeIntervalMs} ms)`,
      ...errors.map((error) => `store-peer: ${error}`),
    ];
    return { rows, details: { sides: Object.fromEntries(results), freshness: fresh, latest }, notes };
  },
};
