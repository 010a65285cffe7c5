/**
 * The baseline of the chat benchmarks: the statements Parley issues for one chat turn, issued directly with `pg` (or PGlite's own API) and nothing else. The texts are copies of those in src/store;
 * `sql-trace.ts` checks at every run that they still match what Parley really sends.
 */
import { randomUUID } from "node:crypto";
import type { PGlite } from "@electric-sql/pglite";
import pg from "pg";

export interface SqlRunner {
  query(sql: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
}

export interface SqlTarget extends SqlRunner {
  close(): Promise<void>;
}

/** What a turn includes besides the conversation's own statements. */
export interface TurnShape {
  /** The thread lease Parley takes on PostgreSQL within the turn's statements (PGlite's lock is in-process). */
  lease: boolean;
  /** Parley announces the turn's events with a statement on PostgreSQL; PGlite's listeners, all in Parley's process, are told without one. */
  notifyStatement: boolean;
}

export interface TurnIds {
  organizationId: string;
  projectId: string;
  projectName: string;
  threadId: string;
}

const statementNames = new Map<string, string>();

/** Named statements, parsed once per connection, as Parley's own pool sends them (src/store/postgres-db.ts). */
function prepared(sql: string, params: unknown[] | undefined): pg.QueryConfig {
  if (!params) return { text: sql };
  let name = statementNames.get(sql);
  if (!name) {
    name = `direct_${statementNames.size + 1}`;
    statementNames.set(sql, name);
  }
  return { name, text: sql, values: params };
}

export function directPostgres(url: string, poolSize: number): SqlTarget {
  const pool = new pg.Pool({ connectionString: url, max: poolSize });
  pool.on("error", () => undefined);
  return {
    query: async (sql, params) => (await pool.query(prepared(sql, params))).rows as Record<string, unknown>[],
    close: () => pool.end(),
  };
}

export function directPglite(database: PGlite): SqlTarget {
  return {
    query: async (sql, params) => (await database.query<Record<string, unknown>>(sql, params)).rows,
    close: () => database.close(),
  };
}

/** A turn's two statements (src/store/turns-store.ts). */
export const openTurnStatement = "SELECT conversation_id, history, event_seq FROM parley_open_turn($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)";
export const closeTurnStatement = "SELECT event_seq, released FROM parley_close_turn($1, $2, $3, $4, $5, $6, $7)";

/** Parley's notification statement (src/store/postgres-db.ts). */
async function notify(target: SqlRunner, notifications: [string, string][]): Promise<void> {
  await target.query(
    `WITH no_flush AS (SELECT set_config('synchronous_commit', 'off', true))
         SELECT pg_notify(n.channel, n.payload) FROM no_flush, unnest($1::text[], $2::text[]) AS n(channel, payload)`,
    [notifications.map(([channel]) => channel), notifications.map(([, payload]) => payload)],
  );
}

/**
 * One turn in the steady state, where the API key, thread and project come from Parley's caches: the turn's two
 * statements (see src/store/functions/parley_open_turn.sql and parley_close_turn.sql) and one notification statement for both (Parley
 * sends those of a millisecond together: the built-in agent answers within it; under load they are fewer still).
 */
export async function directTurn(target: SqlTarget, ids: TurnIds, shape: TurnShape, question: string, answer: string): Promise<void> {
  const lease = shape.lease ? [randomUUID(), 0, 30] : [null, null, null];
  const [opened] = await target.query(openTurnStatement, [
    ids.threadId,
    ids.projectId,
    false,
    randomUUID(),
    question,
    JSON.stringify({ user_type: "user" }),
    41,
    ...lease,
  ]);
  const [closed] = await target.query(closeTurnStatement, [
    ids.threadId,
    opened?.conversation_id,
    randomUUID(),
    answer,
    JSON.stringify({ provider: "builtin" }),
    "0.002",
    lease[0],
  ]);
  if (!shape.notifyStatement) return;
  await notify(target, [
    ["parley_thread_events", `${ids.threadId} ${String(opened?.event_seq)}`],
    ["parley_thread_events", `${ids.threadId} ${String(closed?.event_seq)}`],
    ...(closed?.released ? [["parley_thread_unlocked", ids.threadId] as [string, string]] : []),
  ]);
}
