/**
 * A Parley server as `npm start` runs it (its Node flags, config from the environment, createApp, listen, freed
 * memory handed back), in a child process of the benchmark. Besides HTTP it answers the runner's requests: SQL on its
 * own database (PGlite lives inside this process, so bulk loads have to run here) and its memory figures.
 */
import { createApp } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { trimFreedMemory } from "../../src/process-memory.js";
import { serveParent } from "./children.js";

export interface ParleyServerInfo {
  port: number;
  pid: number;
}

const config = loadConfig(process.env);
const app = await createApp(config);
await app.server.listen({ port: 0, host: "127.0.0.1" });
trimFreedMemory(config.memoryTrimIntervalMs);
const address = app.server.server.address();
if (address === null || typeof address === "string") throw new Error("no TCP address");

serveParent(
  { port: address.port, pid: process.pid } satisfies ParleyServerInfo,
  {
    sql: async (payload) => {
      const { sql, params } = payload as { sql: string; params?: unknown[] };
      return app.db.query(sql, params);
    },
    /** With `{ gc: true }` (the server runs with --expose-gc) the heap is collected first, so that only live memory counts. */
    memory: (payload) => {
      if ((payload as { gc?: boolean } | null)?.gc) globalThis.gc?.();
      return process.memoryUsage();
    },
  },
  () => app.close(),
);
