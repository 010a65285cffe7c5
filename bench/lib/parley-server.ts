/**
 * A Parley server as `npm start` runs it (its Node flags, config from the environment, createApp, listen, freed
 * memory handed back), in a child process of the benchmark. Besides HTTP it answers the runner's requests: SQL on its
 * own database (PGlite lives inside this process, so bulk loads have to run here) and its memory figures.
 */
import { Session, type HeapProfiler, type Profiler } from "node:inspector/promises";
import { findSourceMap, type SourceMapping } from "node:module";
import { PerformanceObserver } from "node:perf_hooks";
import { getHeapStatistics } from "node:v8";
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

/**
 * tsx's transpiled code is what V8 profiles: with --enable-source-maps (which the allocation benchmark gives its
 * server), each frame is moved to its TypeScript line.
 */
function toSourcePositions(root: HeapProfiler.SamplingHeapProfileNode): void {
  const stack = [root];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    toSourcePosition(node.callFrame);
    stack.push(...node.children);
  }
}

function toSourcePosition(frame: { url: string; lineNumber: number; columnNumber: number }): void {
  // findEntry answers an empty object for a position no mapping covers.
  const entry: Partial<SourceMapping> | undefined = frame.url.startsWith("file://") ? findSourceMap(frame.url)?.findEntry(frame.lineNumber, frame.columnNumber) : undefined;
  if (entry?.originalLine !== undefined && entry.originalColumn !== undefined) {
    frame.lineNumber = entry.originalLine;
    frame.columnNumber = entry.originalColumn;
  }
}

let collections = 0;
/** Observed only from `allocationStart` to `allocationStop`: an observer costs the server CPU on every collection. */
const collectionObserver = new PerformanceObserver((list) => void (collections += list.getEntries().length));
let allocationStart = { usedBytes: 0, collections: 0 };
const inspector = new Session();
inspector.connect();

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
    /**
     * Collects the heap, then counts from there: with a young generation large enough for the whole window (the
     * server started with big semi-spaces), nothing is collected until `allocationStop`, and the growth of the used
     * heap is every byte allocated meanwhile.
     */
    allocationStart: async () => {
      collectionObserver.observe({ entryTypes: ["gc"] });
      globalThis.gc?.();
      // The collection's own performance entry arrives after a turn of the event loop: let it be counted first.
      await new Promise((resolve) => setTimeout(resolve, 20));
      allocationStart = { usedBytes: getHeapStatistics().used_heap_size, collections };
    },
    allocationStop: () => {
      const allocated = { bytes: getHeapStatistics().used_heap_size - allocationStart.usedBytes, collections: collections - allocationStart.collections };
      collectionObserver.disconnect();
      return allocated;
    },
    /** V8's sampling heap profiler, objects collected since included: where the allocations come from. */
    heapProfileStart: async (payload) => {
      const { samplingInterval } = payload as { samplingInterval: number };
      // Node 20's typings predate the two flags V8 accepts.
      const sampling = { samplingInterval, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true };
      await inspector.post("HeapProfiler.startSampling", sampling);
    },
    /** V8's CPU profiler over a measured window only (BENCH_PROFILE_DIR profiles the whole life of the server). */
    cpuProfileStart: async (payload) => {
      const { samplingIntervalUs } = payload as { samplingIntervalUs: number };
      await inspector.post("Profiler.enable");
      await inspector.post("Profiler.setSamplingInterval", { interval: samplingIntervalUs });
      await inspector.post("Profiler.start");
    },
    cpuProfileStop: async (): Promise<Profiler.Profile> => {
      const { profile } = await inspector.post("Profiler.stop");
      for (const node of profile.nodes) toSourcePosition(node.callFrame);
      return profile;
    },
    heapProfileStop: async (): Promise<HeapProfiler.SamplingHeapProfile> => {
      const { profile } = await inspector.post("HeapProfiler.stopSampling");
      toSourcePositions(profile.head);
      return profile;
    },
  },
  () => app.close(),
);
