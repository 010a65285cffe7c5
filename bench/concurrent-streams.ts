/**
 * 5. A thousand streaming chats on one instance (PostgreSQL), each on its own thread and connection, all started
 * within a second, the openai provider pointed at a fake server that streams slowly. Two phases on one server:
 *   - replies long enough (15 s; 5 s with --quick) for every stream to be admitted while the first ones still stream: how many the
 *     instance holds at once, and the server's memory per stream (RSS and heap above the warmed-up idle server,
 *     sampled in the server process);
 *   - short replies (40 chunks 50 ms apart): completion, time to first token, and how fast the instance admits
 *     new streams (their database work before the first token).
 */
import type { Benchmark } from "./lib/benchmark.js";
import { benchFile, startChild, type Child } from "./lib/children.js";
import { adminKey, chatQuestion, type BenchContext, type Parley } from "./lib/context.js";
import { api } from "./lib/http.js";
import { row, type BenchmarkResult, type Row } from "./lib/report.js";
import type { StreamResult } from "./lib/stream-client.js";
import { sleep } from "./lib/stats.js";

const chunkDelayMs = 50;
const shortChunks = 40;

function words(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `word${i} `);
}

/** Runs the streams while sampling the server's memory; returns the result and the peaks. */
async function streamsWithMemory(parley: Parley, client: Child<unknown>, spec: unknown): Promise<{ result: StreamResult; peakRss: number; peakHeap: number }> {
  let peakRss = 0;
  let peakHeap = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const memory = await parley.memory();
      peakRss = Math.max(peakRss, memory.rss);
      peakHeap = Math.max(peakHeap, memory.heapUsed);
      await sleep(100);
    }
  })();
  try {
    return { result: await client.call<StreamResult>("run", spec), peakRss, peakHeap };
  } finally {
    sampling = false;
    await sampler;
  }
}

export const concurrentStreams: Benchmark = {
  name: "streams",
  byDefault: true,
  async run(context: BenchContext): Promise<BenchmarkResult> {
    if (!context.options.dbs.includes("postgres")) return { rows: [], details: {}, notes: ["streams: runs on PostgreSQL only"] };
    const streams = context.options.quick ? 250 : 1000;
    const short = await context.fakeProvider({ chunks: words(shortChunks), firstChunkDelayMs: chunkDelayMs, chunkDelayMs });
    const longChunks = context.options.quick ? 100 : 300;
    const long = await context.fakeProvider({ chunks: words(longChunks), firstChunkDelayMs: chunkDelayMs, chunkDelayMs });
    const parley = await context.parley("postgres");
    const tenant = await context.tenant(parley, { agent: { provider: "openai", base_url: short.url, model: "fake-model", api_key: "sk-bench-0123456789" } });
    await api(parley.base, "POST", `/admin/organizations/${tenant.organizationId}/projects`, `Bearer ${adminKey}`, {
      name: "long",
      config: { agent: { provider: "openai", base_url: long.url, model: "fake-model", api_key: "sk-bench-0123456789" } },
    });
    const threads = await context.threads(parley, tenant, streams);
    const client = await startChild<{ pid: number }>(benchFile("lib/stream-client.ts"));
    context.defer(() => client.stop());
    const spec = (ids: string[], project: string) => ({
      port: parley.port,
      authorization: tenant.apiKey,
      bodies: ids.map((threadId) => ({ thread_id: threadId, message: chatQuestion, service_config_name: project, streaming: true })),
      rampMs: 1000,
      timeoutMs: 180_000,
    });

    await client.call<StreamResult>("run", spec(threads.slice(0, 100), tenant.projectName));
    await sleep(2000);
    // The held streams first, on a server that has only been warmed up: RSS, once grown, does not shrink.
    const idle = await parley.memory(true);
    const held = await streamsWithMemory(parley, client, spec(threads, "long"));
    const shortRun = await client.call<StreamResult>("run", spec(threads, tenant.projectName));
    await parley.stop();

    const admittedPerSecond = (shortRun.completed * 1000) / Math.max(1, shortRun.admittedAfterMs);
    const perStream = (peak: number, base: number) => (peak - base) / 1024 / Math.max(1, held.result.peakInFlight);
    const failures = [shortRun, held.result].filter((run) => run.failed > 0);
    const notes = [
      `streams: ${streams} chats started within 1 s; short replies stream ${shortChunks} chunks ${chunkDelayMs} ms apart, long ones ${longChunks}; ` +
        `idle server RSS ${(idle.rss / 2 ** 20).toFixed(0)} MiB, with the long streams at most ${(held.peakRss / 2 ** 20).toFixed(0)} MiB`,
      ...failures.map((run) => `streams: ${run.failed} failed (${run.firstError ?? ""})`),
    ];
    const name = "5 concurrent streams";
    const rows: Row[] = [
      row(
        { benchmark: name, db: "postgres", name: "short streams completed", figure: shortRun.completed, unit: "streams", baseline: streams, baselineLabel: "started", target: `all ${streams}` },
        { on: "figure", atLeast: streams },
      ),
      row({ benchmark: name, db: "postgres", name: "short streams: TTFT p50", figure: shortRun.ttft.p50, unit: "ms" }),
      row({ benchmark: name, db: "postgres", name: "short streams: TTFT p99", figure: shortRun.ttft.p99, unit: "ms" }),
      row({ benchmark: name, db: "postgres", name: "short streams: in flight at once", figure: shortRun.peakInFlight, unit: "streams" }),
      row({ benchmark: name, db: "postgres", name: "streams admitted per second", figure: admittedPerSecond, unit: "streams/s" }),
      row(
        { benchmark: name, db: "postgres", name: "long streams: in flight at once", figure: held.result.peakInFlight, unit: "streams", baseline: streams, baselineLabel: "started", target: `${streams} concurrent` },
        { on: "figure", atLeast: streams },
      ),
      row({ benchmark: name, db: "postgres", name: "long streams: TTFT p99", figure: held.result.ttft.p99, unit: "ms" }),
      row({ benchmark: name, db: "postgres", name: "RSS per stream", figure: perStream(held.peakRss, idle.rss), unit: "KiB" }),
      row({ benchmark: name, db: "postgres", name: "heap per stream", figure: perStream(held.peakHeap, idle.heapUsed), unit: "KiB" }),
    ];
    return { rows, details: { shortRun, held, idle, streams, chunkDelayMs, shortChunks, longChunks }, notes };
  },
};
