import { PGlite } from "@electric-sql/pglite";
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm";
import type { Db, NotificationHandler, Queryable, Transaction } from "../domain/shared/database.js";

/** The embedded default: PostgreSQL compiled to WebAssembly, data in a folder (or in memory for tests). */
export async function openPglite(dataDir: string | undefined): Promise<Db> {
  const pg = await PGlite.create({ ...(dataDir ? { dataDir } : {}), extensions: { pg_trgm } });
  const run = async <Row>(target: Pick<PGlite, "query">, sql: string, params?: readonly unknown[]): Promise<Row[]> => {
    const result = await target.query<Row>(sql, params ? [...params] : undefined);
    return result.rows;
  };
  const self: Queryable = { query: (sql, params) => run(pg, sql, params) };
  const transaction = <T>(work: (tx: Transaction) => Promise<T>): Promise<T> =>
    pg.transaction((tx) =>
      work({
        query: (sql, params) => run(tx, sql, params),
        exec: async (script) => void (await tx.exec(script)),
      }),
    );
  return {
    kind: "pglite",
    query: self.query,
    transaction,
    transactionCommittingLater: async (work) => ({ result: await transaction(work), committed: Promise.resolve() }),
    exec: async (script) => void (await pg.exec(script)),
    async listen(channel: string, handler: NotificationHandler) {
      return pg.listen(channel, handler);
    },
    // PGlite delivers notifications inside this process: there is no connection to lose.
    listening: true,
    onListenerState: () => () => undefined,
    async ping() {
      await pg.query("SELECT 1");
    },
    async close() {
      if (!pg.closed) await pg.close();
    },
  };
}
