import { readFile } from "node:fs/promises";
import { PGlite } from "@electric-sql/pglite";
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm";
import type { Db, Notification, NotificationHandler, Queryable, Transaction } from "../domain/shared/database.js";

/**
 * PostgreSQL's memory settings for the embedded database, in place of the ones PGlite 0.3 starts it with. PGlite
 * passes them as `-c name=value` arguments compiled into its WebAssembly as C strings, and arguments outrank
 * postgresql.conf and ALTER SYSTEM; PGlite 0.3 has no option for them (0.5 has, but it is PostgreSQL 18, which
 * cannot open the PostgreSQL 17 data folders of today's installs). So the strings are rewritten in the module's bytes
 * before it is compiled, each in place, no longer than the original.
 *
 * Shared buffers are the one that costs memory at rest: PostgreSQL zeroes the whole pool at start, so 128 MB of
 * them are resident from the first second. 16 MB (2,048 pages) holds the hot indexes of an instance that a single
 * machine serves; a page outside them is one read from the operating system's file cache. WAL buffers follow
 * shared buffers in a stock PostgreSQL (1/32 of them); work_mem and temp_buffers are taken only while a query needs
 * them, so they stay as they were.
 */
export const PGLITE_MEMORY_SETTINGS: ReadonlyArray<{ compiled: string; wanted: string }> = [
  { compiled: "shared_buffers=128MB", wanted: "shared_buffers=16MB" },
  { compiled: "wal_buffers=4MB", wanted: "wal_buffers=1MB" },
];

/** PGlite's WebAssembly with PGLITE_MEMORY_SETTINGS written in; compiled once per process. */
let tunedModule: Promise<WebAssembly.Module> | undefined;

function pgliteModule(): Promise<WebAssembly.Module> {
  tunedModule ??= (async () => {
    const bytes = await readFile(new URL("pglite.wasm", import.meta.resolve("@electric-sql/pglite")));
    for (const { compiled, wanted } of PGLITE_MEMORY_SETTINGS) rewriteCString(bytes, compiled, wanted);
    return WebAssembly.compile(bytes);
  })();
  return tunedModule;
}

/** Replaces the one NUL-terminated `from` in `bytes` by `to`, padding with NULs; refuses anything else. */
function rewriteCString(bytes: Buffer, from: string, to: string): void {
  const original = Buffer.from(`${from}\0`);
  const replacement = Buffer.from(`${to}\0`);
  const at = bytes.indexOf(original);
  if (at < 0 || bytes.indexOf(original, at + 1) >= 0 || replacement.length > original.length) {
    throw new Error(`PGlite's WebAssembly does not hold "${from}" exactly once: the installed @electric-sql/pglite is not the version Parley's memory settings are made for`);
  }
  replacement.copy(bytes, at);
  bytes.fill(0, at + replacement.length, at + original.length);
}

/** The embedded default: PostgreSQL compiled to WebAssembly, data in a folder (or in memory for tests). */
export async function openPglite(dataDir: string | undefined): Promise<Db> {
  const pg = await PGlite.create({ ...(dataDir ? { dataDir } : {}), extensions: { pg_trgm }, wasmModule: await pgliteModule() });
  const run = async <Row>(target: Pick<PGlite, "query">, sql: string, params?: readonly unknown[]): Promise<Row[]> => {
    const result = await target.query<Row>(sql, params ? [...params] : undefined);
    return result.rows;
  };
  const self: Queryable = { query: (sql, params) => run(pg, sql, params) };
  /** This process's listeners by channel, the only ones the folder has: what `notify` delivers to. */
  const listeners = new Map<string, Set<NotificationHandler>>();
  const deliver = (notifications: readonly Notification[]): void => {
    for (const { channel, payload } of notifications) for (const handler of listeners.get(channel) ?? []) handler(payload);
  };
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
    queryCommittingLater: async (sql, params) => ({ rows: await self.query(sql, params), committed: Promise.resolve() }),
    exec: async (script) => void (await pg.exec(script)),
    async listen(channel: string, handler: NotificationHandler) {
      // Both ways in: NOTIFYs of statements (triggers, functions) through PGlite, announcements through `notify`.
      const unlisten = await pg.listen(channel, handler);
      let handlers = listeners.get(channel);
      if (!handlers) {
        handlers = new Set();
        listeners.set(channel, handlers);
      }
      handlers.add(handler);
      return async () => {
        handlers.delete(handler);
        await unlisten();
      };
    },
    notify: (notifications) =>
      new Promise((resolve) =>
        setImmediate(() => {
          deliver(notifications);
          resolve();
        }),
      ),
    // PGlite delivers notifications inside this process: there is no connection to lose.
    listening: true,
    onListenerState: () => () => undefined,
    // One process holds the folder: its listener is the only one.
    listenerSession: 0,
    listenerSessions: async () => [0],
    async ping() {
      await pg.query("SELECT 1");
    },
    async close() {
      if (!pg.closed) await pg.close();
    },
  };
}
