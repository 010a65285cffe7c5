/**
 * Bytes allocated on the server's heap per non-streamed chat (built-in agent, 32 threads at once, as `chat` runs) and
 * per `GET /threads/{id}/messages` page: a figure that, unlike throughput, does not move with the machine's load.
 * The server runs with a young generation large enough for a whole window, so that no collection happens inside it
 * and the used heap's growth is exactly what the window allocated; then V8's sampling heap profiler attributes a
 * window's allocation to the functions that made it.
 */
import { writeFile } from "node:fs/promises";
import { Agent, request } from "node:http";
import path from "node:path";
import type { HeapProfiler } from "node:inspector";
import type { Benchmark } from "./lib/benchmark.js";
import { chatQuestion, helpDeskConfig, type BenchContext, type Parley, type Tenant } from "./lib/context.js";
import { allocationSites } from "./lib/heap-profile.js";
import { row, type BenchmarkResult, type Row } from "./lib/report.js";

const concurrency = 32;
const warmupRounds = 40;
const measuredRounds = 25;
const windows = 3;
const pageReads = 800;
const topSites = 15;
/** One sample per this many bytes on average: about 80 samples per chat. */
const samplingInterval = 1024;
/** Each semi-space (MB): room for a window of about 800 chats and its page reads without a scavenge. */
const semiSpaceMb = 256;

function send(agent: Agent, port: number, method: string, path: string, authorization: string, body?: unknown): Promise<void> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const headers: Record<string, string | number> = { authorization };
  if (payload !== undefined) Object.assign(headers, { "content-type": "application/json", "content-length": Buffer.byteLength(payload) });
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: "127.0.0.1", port, path, method, agent, headers }, (response) => {
      response.resume();
      response.on("end", () => ((response.statusCode ?? 0) < 300 ? resolve() : reject(new Error(`${method} ${path}: HTTP ${response.statusCode}`))));
      response.on("error", reject);
    });
    outgoing.on("error", reject);
    outgoing.end(payload);
  });
}

interface Load {
  /** Units (chats or reads) of one run. */
  units: number;
  run(): Promise<void>;
}

function chats(parley: Parley, tenant: Tenant, threads: string[], agent: Agent, rounds: number): Load {
  return {
    units: threads.length * rounds,
    run: async () => {
      await Promise.all(
        threads.map(async (threadId) => {
          for (let round = 0; round < rounds; round++) {
            await send(agent, parley.port, "POST", "/chat", tenant.apiKey, { thread_id: threadId, message: chatQuestion, service_config_name: tenant.projectName });
          }
        }),
      );
    },
  };
}

function pages(parley: Parley, tenant: Tenant, threadId: string, agent: Agent, reads: number): Load {
  return {
    units: reads,
    run: async () => {
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          for (let read = 0; read < reads / concurrency; read++) await send(agent, parley.port, "GET", `/threads/${threadId}/messages`, tenant.apiKey);
        }),
      );
    },
  };
}

/** Bytes allocated per unit in each of `windows` windows (NaN for a window a collection fell into). */
async function exactBytes(parley: Parley, load: Load): Promise<number[]> {
  const perUnit: number[] = [];
  for (let window = 0; window < windows; window++) {
    await parley.call("allocationStart");
    await load.run();
    const { bytes, collections } = await parley.call<{ bytes: number; collections: number }>("allocationStop");
    perUnit.push(collections === 0 ? bytes / load.units : Number.NaN);
  }
  return perUnit;
}

/** BENCH_PROFILE_DIR=dir also saves each sampled profile as `<name>.heapprofile` (Chrome DevTools' Memory tab opens it). */
async function sampledSites(parley: Parley, load: Load, name: string) {
  await parley.call("heapProfileStart", { samplingInterval });
  await load.run();
  const profile = await parley.call<HeapProfiler.SamplingHeapProfile>("heapProfileStop");
  const profileDir = process.env.BENCH_PROFILE_DIR;
  if (profileDir) await writeFile(path.join(profileDir, `${name}.heapprofile`), JSON.stringify(profile));
  return allocationSites(profile, load.units, topSites);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

export const chatAllocation: Benchmark = {
  name: "alloc",
  byDefault: false,
  async run(context: BenchContext): Promise<BenchmarkResult> {
    const rows: Row[] = [];
    const details: Record<string, unknown> = {};
    const notes: string[] = [];
    for (const kind of context.options.dbs) {
      const parley = await context.parley(kind, {}, [`--max-semi-space-size=${semiSpaceMb}`, `--min-semi-space-size=${semiSpaceMb}`, "--enable-source-maps"]);
      const tenant = await context.tenant(parley, helpDeskConfig);
      const threads = await context.threads(parley, tenant, concurrency);
      const agent = new Agent({ keepAlive: true, maxSockets: concurrency });
      try {
        await chats(parley, tenant, threads, agent, warmupRounds).run();
        const chatLoad = chats(parley, tenant, threads, agent, measuredRounds);
        const chatBytes = await exactBytes(parley, chatLoad);
        const chatSites = await sampledSites(parley, chatLoad, `alloc-chat-${kind}`);
        const pageLoad = pages(parley, tenant, threads[0]!, agent, pageReads);
        await pageLoad.run();
        const pageBytes = await exactBytes(parley, pageLoad);
        const pageSites = await sampledSites(parley, pageLoad, `alloc-page-${kind}`);
        details[kind] = { chatBytes, chatSites, pageBytes, pageSites };
        rows.push(
          row({ benchmark: "2 chat throughput", db: kind, name: `heap allocated per chat, ${concurrency} threads (median of ${windows} windows of ${chatLoad.units})`, figure: median(chatBytes) / 1024, unit: "KiB" }),
          row({ benchmark: "1 messages page", db: kind, name: `heap allocated per GET 20 messages (median of ${windows} windows of ${pageLoad.units})`, figure: median(pageBytes) / 1024, unit: "KiB" }),
        );
        const describe = (label: string, exact: number[], sampled: ReturnType<typeof allocationSites>) =>
          `${label} [${kind}]: ${exact.map((bytes) => (bytes / 1024).toFixed(1)).join(", ")} KiB per unit (sampled: ${(sampled.sampledBytesPerUnit / 1024).toFixed(1)}); top sites: ` +
          sampled.sites.map((site) => `${site.site} ${(site.bytesPerUnit / 1024).toFixed(2)} KiB (${(site.share * 100).toFixed(1)}%)`).join("; ");
        notes.push(describe("allocation per chat", chatBytes, chatSites), describe("allocation per page read", pageBytes, pageSites));
      } finally {
        agent.destroy();
        await parley.stop();
      }
    }
    return { rows, details, notes };
  },
};
