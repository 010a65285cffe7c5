/**
 * Keeps the chat baselines honest: records the statements of one real chat turn through the app and those of
 * `directTurn`, and reports any statement issued by one and not the other.
 */
import type { Db, Notification, Queryable } from "../../src/domain/shared/database.js";
import { notifyStatement } from "../../src/store/postgres-db.js";
import { directTurn, type SqlTarget, type TurnIds, type TurnShape } from "./chat-sql.js";
import { builtinAnswer, chatQuestion } from "./context.js";

const normalize = (sql: string) => sql.replace(/\s+/g, " ").trim();

/**
 * Wraps anything with `query`, logging each statement. The wrapper inherits from the target rather than copying it,
 * so that getters (a Db's `listening`) stay live.
 */
function recording<Q extends { query: (...args: never[]) => Promise<unknown> }>(runner: Q, log: string[]): Q {
  return Object.assign(Object.create(runner) as Q, {
    query: (sql: string, params?: unknown[]) => {
      log.push(normalize(sql));
      return (runner.query as (sql: string, params?: unknown[]) => Promise<unknown>)(sql, params);
    },
  });
}

/** A Db that logs each statement and the bounds of its transactions. */
export function traced(db: Db, log: string[]): Db {
  return Object.assign(recording(db, log), {
    transaction: async <T>(work: (tx: Queryable) => Promise<T>): Promise<T> => {
      log.push("BEGIN");
      const result = await db.transaction((tx) => work(recording(tx, log)));
      log.push("COMMIT");
      return result;
    },
    notify: (notifications: readonly Notification[]) => {
      if (db.kind === "postgres") log.push(normalize(notifyStatement));
      return db.notify(notifications);
    },
    queryCommittingLater: <Row>(sql: string, params: readonly unknown[]) => {
      log.push("BEGIN", normalize(sql), "COMMIT");
      return db.queryCommittingLater<Row>(sql, params);
    },
  });
}

/** Statements one list has more often than the other, as "+sql" (only in `left`) and "-sql" (only in `right`). */
export function statementDiff(left: string[], right: string[]): string[] {
  const counts = new Map<string, number>();
  for (const sql of left) counts.set(sql, (counts.get(sql) ?? 0) + 1);
  for (const sql of right) counts.set(sql, (counts.get(sql) ?? 0) - 1);
  return [...counts].filter(([, count]) => count !== 0).map(([sql, count]) => `${count > 0 ? "+" : "-"}${count > 0 ? count : -count}× ${sql.slice(0, 120)}`);
}

/** Runs one `directTurn` on `ids` and returns how its statements differ from `reference` (empty: faithful). */
export async function checkBaseline(reference: string[], target: SqlTarget, ids: TurnIds, shape: TurnShape): Promise<string[]> {
  const log: string[] = [];
  await directTurn(recording(target, log), ids, shape, chatQuestion, builtinAnswer);
  return statementDiff(reference, log);
}
