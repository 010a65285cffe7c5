import pg from "pg";
import { isConnectionFailure } from "./db.js";
import { type Db, type Transaction } from "../domain/shared/database.js";
import { PostgresListener } from "./postgres-listener.js";

/** int8 as a JS number, as PGlite returns it, so that repositories read the same values from both. */
function getTypeParser(oid: number, format?: "text" | "binary"): (value: string) => unknown {
  if (oid === pg.types.builtins.INT8) return (value: string) => Number(value);
  return pg.types.getTypeParser(oid, format ?? "text") as (value: string) => unknown;
}

const maxPreparedStatements = 1_000;

/**
 * Names for the statements the code issues, so that each connection parses and plans them once rather than on every
 * call (a third of the database's work for a short look-up). The code has a fixed set of statement texts; should
 * some ever be built from data, the names stop at a bound and the rest run unnamed.
 */
function preparedStatementNames(): (sql: string) => string | undefined {
  const names = new Map<string, string>();
  return (sql) => {
    let name = names.get(sql);
    if (name === undefined && names.size < maxPreparedStatements && /^\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\b/i.test(sql)) {
      name = `parley_${names.size + 1}`;
      names.set(sql, name);
    }
    return name;
  };
}

/** A real PostgreSQL through a connection pool: how Parley scales to several instances. */
export function openPostgres(connectionString: string, poolSize: number): Db {
  // Parley's queries are short keyset lookups; JIT compilation (PostgreSQL's default above a cost threshold that a
  // few generate_series rows can cross) cost 9 ms on a 0.4 ms search-context query, so it is off for our sessions.
  const pool = new pg.Pool({ connectionString, max: poolSize, connectionTimeoutMillis: 5_000, types: { getTypeParser }, options: "-c jit=off" });
  // An idle client losing its connection (database restart) must not crash the process.
  pool.on("error", () => undefined);
  const statementName = preparedStatementNames();
  const run = async <Row>(client: pg.Pool | pg.PoolClient, sql: string, params?: readonly unknown[]): Promise<Row[]> => {
    const name = params ? statementName(sql) : undefined;
    const result = await client.query(name ? { name, text: sql, values: [...params!] } : { text: sql, ...(params ? { values: [...params] } : {}) });
    return result.rows as Row[];
  };
  const listener = new PostgresListener({ connectionString, types: { getTypeParser } });

  async function transactionCommittingLater<T>(work: (tx: Transaction) => Promise<T>): Promise<{ result: T; committed: Promise<void> }> {
    const client = await pool.connect();
    // A checked-out client whose connection drops emits "error"; unhandled, that would end the process.
    let dropped = false;
    const ignoreDrop = () => {
      dropped = true;
    };
    client.on("error", ignoreDrop);
    const release = () => {
      client.off("error", ignoreDrop);
      client.release(dropped);
    };
    let result: T;
    try {
      await client.query("BEGIN");
      result = await work({ query: (sql, params) => run(client, sql, params), exec: async (script) => void (await client.query(script)) });
    } catch (error) {
      if (isConnectionFailure(error)) dropped = true;
      else await client.query("ROLLBACK").catch(() => undefined);
      release();
      throw error;
    }
    const committed = client.query("COMMIT").then(
      () => release(),
      (error: unknown) => {
        // A failed COMMIT ends the transaction (rolled back); a lost connection leaves nothing to reuse.
        if (isConnectionFailure(error)) dropped = true;
        release();
        throw error;
      },
    );
    return { result, committed };
  }

  return {
    kind: "postgres",
    query: (sql, params) => run(pool, sql, params),
    // A query without parameters goes by the simple protocol, which takes several statements on one connection.
    exec: async (script) => void (await pool.query(script)),
    async transaction(work) {
      const { result, committed } = await transactionCommittingLater(work);
      await committed;
      return result;
    },
    transactionCommittingLater,
    listen: (channel, handler) => listener.listen(channel, handler),
    get listening() {
      return listener.listening;
    },
    onListenerState: (handler) => listener.onState(handler),
    async ping() {
      await pool.query("SELECT 1");
    },
    async close() {
      await listener.close();
      await pool.end();
    },
  };
}
