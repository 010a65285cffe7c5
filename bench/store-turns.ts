/**
 * 6. The store level (its peer, Mastra's PostgreSQL store, is measured by bench/store-peer.ts): chat turns saved per second through
 * TurnsStore (what the store does for a turn, as ChatService drives it), and whole turns through ChatService wired as
 * app.ts wires it (built-in agent, no HTTP), each against the same statements issued directly;
 * and the latest 20 messages of a 100,000-message thread through MessagesStore against a plain indexed query.
 */
import { HttpToolTransport } from "../src/providers/tools/http-tool-transport.js";
import { PGlite } from "@electric-sql/pglite";
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm";
import pg from "pg";
import pino from "pino";
import { ChatService, turnSetupSize, type TurnRequest, type TurnSetup } from "../src/domain/chat/chat-service.js";
import { Invalidations } from "../src/domain/cache/invalidation.js";
import { ProjectService } from "../src/domain/projects/project-service.js";
import { SecretBox } from "../src/domain/access/secrets.js";
import { ThreadTokens } from "../src/domain/access/thread-tokens.js";
import { ThreadService } from "../src/domain/threads/thread-service.js";
import { createLlmProvider } from "../src/providers/llm/index.js";
import type { Db } from "../src/domain/shared/database.js";
import { MessagesStore } from "../src/store/messages-store.js";
import { ConversationsStore } from "../src/store/conversations-store.js";
import { ProjectsStore } from "../src/store/projects-store.js";
import { InProcessThreadLocks, PostgresThreadLocks } from "../src/store/thread-locks.js";
import { ThreadsStore } from "../src/store/threads-store.js";
import { uuidv7 } from "../src/domain/shared/ids.js";
import { TurnsStore } from "../src/store/turns-store.js";
import { Notifier } from "../src/store/notifier.js";
import type { Benchmark } from "./lib/benchmark.js";
import { fillThread } from "./lib/bulk.js";
import { directTurn, type TurnIds } from "./lib/chat-sql.js";
import { builtinAnswer, chatQuestion, type BenchContext, type DbKind } from "./lib/context.js";
import { row, type BenchmarkResult, type Row } from "./lib/report.js";
import { openDirect, openParleyDb, seed, type Seeded } from "./lib/seed.js";
import { checkBaseline, traced } from "./lib/sql-trace.js";
import { alternate } from "./lib/measure.js";
import { ConversationRecall } from "../src/domain/chat/conversation-recall.js";
import { closedLoop, sequential, sleep, summarize } from "./lib/stats.js";

const concurrency = 32;
const historySize = 100_000;
const plainLatest20 = "SELECT id, seq, conversation_id, role, content, extras, created_at FROM messages WHERE thread_id = $1 ORDER BY seq DESC LIMIT 20";

/** ChatService as app.ts wires it. */
function chatService(context: BenchContext, db: Db, seeded: Seeded, invalidations: Invalidations): ChatService {
  const projects = new ProjectService(db, new ProjectsStore(db), new SecretBox("y".repeat(32)));
  const threads = new ThreadService(new ThreadsStore(db), projects, new ThreadTokens("x".repeat(32), 3600));
  const locks = seeded.kind === "postgres" ? new PostgresThreadLocks(db, seeded.location) : new InProcessThreadLocks();
  const notifier = new Notifier(db);
  context.defer(() => locks.close());
  context.defer(() => notifier.close());
  return new ChatService(
    threads,
    projects,
    new ConversationsStore(db),
    new TurnsStore(db, notifier),
    locks,
    (agent, apiKey) => createLlmProvider(agent, apiKey, { timeoutMs: 60_000 }),
    invalidations.cache<TurnSetup>(16 * 1024 * 1024, turnSetupSize),
    invalidations,
    // The bench's projects have no tools: nothing is ever sent or announced.
    { transport: new HttpToolTransport({ allowInternalNetworks: false }), announce: () => Promise.resolve() },
    // Its turns are whole replies, which never guess their history: nothing is kept.
    new ConversationRecall(db, 0),
  );
}

/**
 * The store's own part of a turn, as ChatService drives it: the lease and the two statements (user message,
 * conversation, event and history; reply, event, usage and release) with their notifications, and nothing else.
 */
function turnSaver(context: BenchContext, db: Db, seeded: Seeded): (ids: TurnIds) => Promise<void> {
  const locks = seeded.kind === "postgres" ? new PostgresThreadLocks(db, seeded.location) : new InProcessThreadLocks();
  const notifier = new Notifier(db);
  context.defer(() => locks.close());
  context.defer(() => notifier.close());
  const turns = new TurnsStore(db, notifier);
  return (ids) =>
    locks.withLeasedWork(ids.threadId, async (lease) => {
      const userMessage = { id: uuidv7(), content: chatQuestion, extras: { user_type: "user" } };
      const { conversationId } = await turns.open(
        { threadId: ids.threadId, projectId: ids.projectId, startNewConversation: false, userMessage, historyLimit: 41 },
        lease,
      );
      const reply = { id: uuidv7(), content: builtinAnswer, extras: { provider: "builtin" } };
      await turns.close({ threadId: ids.threadId, conversationId, reply, priceUsd: 0.002 }, lease);
    });
}

function turnOf(ids: TurnIds): TurnRequest {
  return { organizationId: ids.organizationId, threadId: ids.threadId, projectName: ids.projectName, startNewConversation: false, userMessage: { content: chatQuestion, extras: { user_type: "user" } }, task: "reply" };
}


async function measure(context: BenchContext, kind: DbKind) {
  const timing = context.timing;
  const shape = { lease: kind === "postgres", notifyStatement: kind === "postgres" };
  const ours = await seed(context, kind, concurrency);
  const db = await openParleyDb(context, ours);
  const storeTurn: string[] = [];
  const invalidations = new Invalidations(db, pino({ level: "silent" }), 5_000);
  await invalidations.start();
  const stopInvalidations = context.defer(() => invalidations.stop());
  const tracedChat = chatService(context, traced(db, storeTurn), ours, invalidations);
  // The first turn also loads the project's configuration into the service's cache; the second is the steady state.
  await tracedChat.turn(turnOf(ours.traceThread));
  await sleep(20);
  storeTurn.length = 0;
  await tracedChat.turn(turnOf(ours.traceThread));
  // Its notifications go out a millisecond later.
  await sleep(20);
  const chat = chatService(context, db, ours, invalidations);

  const theirs = await seed(context, kind, concurrency);
  const target = await openDirect(context, theirs);
  const diff = await checkBaseline(storeTurn, target, theirs.traceThread, shape);
  const turns = await alternate(
    timing,
    (window) => closedLoop({ concurrency, ...window }, (worker) => chat.turn(turnOf(ours.threads[worker]!)).then(() => undefined)),
    (window) => closedLoop({ concurrency, ...window }, (worker) => directTurn(target, theirs.threads[worker]!, shape, chatQuestion, builtinAnswer)),
  );
  const save = turnSaver(context, db, ours);
  const saves = await alternate(
    timing,
    (window) => closedLoop({ concurrency, ...window }, (worker) => save(ours.threads[worker]!)),
    (window) => closedLoop({ concurrency, ...window }, (worker) => directTurn(target, theirs.threads[worker]!, shape, chatQuestion, builtinAnswer)),
  );

  // The 100,000-message thread: a thread of our seeded organization, filled in SQL.
  const owner = ours.threads[0]!;
  const threadId = `bench-history-${Date.now()}`;
  await db.query("INSERT INTO threads (id, organization_id, type, timezone, project_id) VALUES ($1, $2, 'NORMAL', 'UTC', $3)", [threadId, owner.organizationId, owner.projectId]);
  await fillThread((sql, params) => db.query(sql, params), threadId, owner.projectId, historySize);
  const messages = new MessagesStore(db);
  const storeReads = await sequential(timing.samples, () => messages.olderThanOrAt(threadId, null, 20));
  let plainReads: number[];
  if (kind === "postgres") {
    const client = new pg.Client({ connectionString: ours.location });
    await client.connect();
    plainReads = await sequential(timing.samples, () => client.query(plainLatest20, [threadId]));
    await client.end();
  } else {
    // PGlite admits one process at a time: the app's database closes (its listener first) before the raw one opens.
    await stopInvalidations();
    await db.close();
    const raw = await PGlite.create({ dataDir: ours.location, extensions: { pg_trgm } });
    plainReads = await sequential(timing.samples, () => raw.query(plainLatest20, [threadId]));
    await raw.close();
  }
  return {
    store: turns.a,
    direct: turns.b,
    saves: { store: saves.a, direct: saves.b },
    diff,
    latest20: { store: summarize(storeReads), plain: summarize(plainReads) },
  };
}

export const storeTurns: Benchmark = {
  name: "store",
  byDefault: true,
  async run(context: BenchContext): Promise<BenchmarkResult> {
    const rows: Row[] = [];
    const details: Record<string, unknown> = {};
    const notes: string[] = [];
    for (const kind of context.options.dbs) {
      const figures = await measure(context, kind);
      await context.close();
      details[kind] = figures;
      if (figures.diff.length > 0) notes.push(`store [${kind}]: the baseline's statements differ from the store's: ${figures.diff.join("; ")}`);
      const errors = figures.store.errors + figures.direct.errors + figures.saves.store.errors + figures.saves.direct.errors;
      if (errors > 0) notes.push(`store [${kind}]: errors: ChatService ${figures.store.errors} (${figures.store.firstError ?? ""}), TurnsStore ${figures.saves.store.errors} (${figures.saves.store.firstError ?? ""}), direct ${figures.direct.errors + figures.saves.direct.errors}`);
      const targets = kind === "postgres";
      rows.push(
        row(
          { benchmark: "6 store level", db: kind, name: `turns saved/s through TurnsStore, ${concurrency} threads`, figure: figures.saves.store.perSecond, unit: "turns/s", baseline: figures.saves.direct.perSecond, baselineLabel: "same SQL direct", ...(targets ? { target: "≥ 2,200 turns/s" } : {}) },
          targets ? { on: "figure", atLeast: 2200 } : undefined,
        ),
        row({ benchmark: "6 store level", db: kind, name: `chat turns/s through ChatService, ${concurrency} threads`, figure: figures.store.perSecond, unit: "turns/s", baseline: figures.direct.perSecond, baselineLabel: "same SQL direct" }),
        row(
          { benchmark: "6 store level", db: kind, name: "latest 20 of 100k messages, p50", figure: figures.latest20.store.p50, unit: "ms", baseline: figures.latest20.plain.p50, baselineLabel: "plain SQL", ...(targets ? { target: "≤ 0.5 ms" } : {}) },
          targets ? { on: "figure", atMost: 0.5 } : undefined,
        ),
        row({ benchmark: "6 store level", db: kind, name: "latest 20 of 100k messages, p99", figure: figures.latest20.store.p99, unit: "ms", baseline: figures.latest20.plain.p99, baselineLabel: "plain SQL" }),
      );
    }
    return { rows, details, notes };
  },
};
