/**
 * Fresh databases for the in-process baselines, set up through the app itself (in this process, HTTP injected):
 * an organization, the help-desk project and threads. One chat turn on a thread of its own is recorded statement by
 * statement, as the reference the baselines are checked against.
 */
import { PGlite } from "@electric-sql/pglite";
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm";
import pino from "pino";
import { createApp } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import type { Db } from "../../src/domain/shared/database.js";
import { openPglite } from "../../src/store/pglite-db.js";
import { openPostgres } from "../../src/store/postgres-db.js";
import { directPglite, directPostgres, type SqlTarget, type TurnIds } from "./chat-sql.js";
import { adminKey, chatQuestion, helpDeskConfig, type BenchContext, type DbKind } from "./context.js";
import { traced } from "./sql-trace.js";
import { sleep } from "./stats.js";

export interface Seeded {
  kind: DbKind;
  /** PostgreSQL URL, or the PGlite folder. */
  location: string;
  threads: TurnIds[];
  /** A thread of its own for checking a baseline; it has had one turn already, like the traced one. */
  traceThread: TurnIds;
  /** The statements of one chat turn through the app (HTTP, events and all). */
  appTurn: string[];
  poolSize: number;
}

export async function seed(context: BenchContext, kind: DbKind, threadCount: number): Promise<Seeded> {
  const dataDir = await context.tempDir();
  const database = kind === "postgres" ? await context.postgresDatabase() : undefined;
  const log: string[] = [];
  const db = traced(database ? openPostgres(database.url, 5) : await openPglite(dataDir), log);
  const config = loadConfig({
    ADMIN_API_KEY: adminKey,
    DATA_DIR: dataDir,
    LOG_LEVEL: "silent",
    ...(database ? { DATABASE_URL: database.url, JWT_SECRET: "x".repeat(32), ENCRYPTION_KEY: "y".repeat(32) } : {}),
  });
  const app = await createApp(config, { db, logger: pino({ level: "silent" }) });
  const call = async <T>(method: "POST", url: string, authorization: string, payload: Record<string, unknown>): Promise<T> => {
    const response = await app.server.inject({ method, url, headers: { authorization }, payload });
    if (response.statusCode >= 300) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`);
    return JSON.parse(response.body) as T;
  };
  const org = await call<{ id: string; api_key: string }>("POST", "/admin/organizations", `Bearer ${adminKey}`, { name: "Direct" });
  const project = await call<{ id: string }>("POST", `/admin/organizations/${org.id}/projects`, `Bearer ${adminKey}`, { name: "bench", config: helpDeskConfig });
  const newThread = async (): Promise<TurnIds> => ({
    organizationId: org.id,
    projectId: project.id,
    projectName: "bench",
    threadId: (await call<{ thread_id: string }>("POST", "/threads", org.api_key, { project_name: "bench" })).thread_id,
  });
  const threads: TurnIds[] = [];
  for (let i = 0; i < threadCount; i++) threads.push(await newThread());
  const traceThread = await newThread();
  const chat = (threadId: string) => call("POST", "/chat", org.api_key, { thread_id: threadId, message: chatQuestion, service_config_name: "bench" });
  await chat(traceThread.threadId);
  await sleep(200);
  log.length = 0;
  await chat(traceThread.threadId);
  // The app publishes the turn's events after answering.
  await sleep(300);
  // Background work of the voice feature (job polling, call supervision) runs now and then; it is no part of a turn.
  const appTurn = log.filter((sql) => !/pgboss\.|\bcalls\b/.test(sql));
  // The trace thread's second turn is the one checked; it needs one turn before it, as the traced one had.
  const checkThread = await newThread();
  await chat(checkThread.threadId);
  await app.close();
  await db.close();
  return { kind, location: database?.url ?? dataDir, threads, traceThread: checkThread, appTurn, poolSize: config.databasePoolSize };
}

/** The seeded database through `pg` (a pool as large as Parley's) or PGlite's own API, closed at the end of the run. */
export async function openDirect(context: BenchContext, seeded: Seeded): Promise<SqlTarget> {
  const target =
    seeded.kind === "postgres"
      ? directPostgres(seeded.location, seeded.poolSize)
      : directPglite(await PGlite.create({ dataDir: seeded.location, extensions: { pg_trgm } }));
  context.defer(() => target.close());
  return target;
}

/** The seeded database as Parley opens it. */
export async function openParleyDb(context: BenchContext, seeded: Seeded): Promise<Db> {
  const db = seeded.kind === "postgres" ? openPostgres(seeded.location, seeded.poolSize) : await openPglite(seeded.location);
  context.defer(() => db.close());
  return db;
}
