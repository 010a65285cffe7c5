/**
 * Keeps the chat baselines honest: records the statements of one real chat turn through the app and those of
 * `directTurn`, and reports any statement issued by one and not the other.
 */
import type { Db, Queryable } from "../../src/store/db.js";
import { directTurn, type SqlTarget, type TurnIds, type TurnShape } from "./chat-sql.js";
import { builtinAnswer, chatQuestion } from "./context.js";

const normalize = (sql: string) => sql.replace(/\s+/g, " ").trim();

/**
 * Wraps anything with `query` and `transaction`, logging each statement and the transaction bounds. The wrapper
 * inherits from the target rather than copying it, so that getters (a Db's `listening`) stay live.
 */
export function traced<T extends { query: Queryable["query"]; transaction: Db["transaction"] } | SqlTarget>(target: T, log: string[]): T {
  const wrap = <Q extends { query: (...args: never[]) => Promise<unknown> }>(runner: Q): Q =>
    Object.assign(Object.create(runner) as Q, {
      query: (sql: string, params?: unknown[]) => {
        log.push(normalize(sql));
        return (runner.query as (sql: string, params?: unknown[]) => Promise<unknown>)(sql, params);
      },
    });
  const transaction = target.transaction.bind(target) as (work: (tx: Queryable) => Promise<unknown>) => Promise<unknown>;
  return Object.assign(wrap(target), {
    transaction: async (work: (tx: Queryable) => Promise<unknown>) => {
      log.push("BEGIN");
      const result = await transaction((tx) => work(wrap(tx)));
      log.push("COMMIT");
      return result;
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
  await directTurn(traced(target, log), ids, shape, chatQuestion, builtinAnswer);
  return statementDiff(reference, log);
}
