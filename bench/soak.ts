/**
 * 8. Soak (`npm run bench -- --only soak [--minutes N]`, not part of the default run): the maximum chat throughput
 * is measured first, then chats go at half of it for N minutes on a fixed schedule while the server's RSS and heap
 * are sampled every 10 s (the heap after a full collection, so that only live objects count). Memory is steady when
 * the live heap's trend after the first fifth of the run stays within 1 MiB per minute.
 */
import type { Benchmark } from "./lib/benchmark.js";
import { chatQuestion, helpDeskConfig, type BenchContext } from "./lib/context.js";
import { rawRequest } from "./lib/http.js";
import type { LoadResult } from "./lib/load-generator.js";
import { loadWithCpu } from "./lib/measure.js";
import { row, type BenchmarkResult } from "./lib/report.js";
import { sleep, slope } from "./lib/stats.js";

const connections = 32;
const sampleEveryMs = 10_000;
const steadyMiBPerMinute = 1;

export const soak: Benchmark = {
  name: "soak",
  byDefault: false,
  async run(context: BenchContext): Promise<BenchmarkResult> {
    const kind = context.options.dbs[0] ?? "postgres";
    const minutes = context.options.minutes;
    const parley = await context.parley(kind);
    const tenant = await context.tenant(parley, helpDeskConfig);
    const threads = await context.threads(parley, tenant, connections);
    const requests = threads.map((threadId) =>
      rawRequest("POST", "/chat", { authorization: tenant.apiKey }, { thread_id: threadId, message: chatQuestion, service_config_name: tenant.projectName }),
    );
    const maximum = await loadWithCpu(context, parley, { requests, connections, warmupMs: context.timing.warmupMs, durationMs: context.timing.durationMs });
    const rate = maximum.perSecond / 2;

    const samples: { minute: number; rss: number; heapUsed: number }[] = [];
    const started = performance.now();
    let running = true;
    const sampler = (async () => {
      while (running) {
        const memory = await parley.memory(true);
        samples.push({ minute: (performance.now() - started) / 60_000, rss: memory.rss / 2 ** 20, heapUsed: memory.heapUsed / 2 ** 20 });
        const next = started + samples.length * sampleEveryMs;
        while (running && performance.now() < next) await sleep(200);
      }
    })();
    let result: LoadResult;
    try {
      result = await context.load({ port: parley.port, requests, connections, warmupMs: 0, durationMs: minutes * 60_000, ratePerSecond: rate });
    } finally {
      running = false;
      await sampler;
    }
    await parley.stop();

    const settled = samples.filter((sample) => sample.minute >= minutes / 5);
    const heapSlope = slope(settled.map((s) => ({ x: s.minute, y: s.heapUsed })));
    const rssSlope = slope(settled.map((s) => ({ x: s.minute, y: s.rss })));
    const name = `${minutes} min at half of ${maximum.perSecond.toFixed(0)} chats/s`;
    return {
      rows: [
        row({ benchmark: "8 soak", db: kind, name: `chats/s, ${name}`, figure: result.perSecond, unit: "chats/s", baseline: rate, baselineLabel: "scheduled" }, { on: "ratio", atLeast: 0.95 }),
        row({ benchmark: "8 soak", db: kind, name: "errors", figure: result.errors, unit: "", target: "0" }, { on: "figure", atMost: 0 }),
        row({ benchmark: "8 soak", db: kind, name: "chat p99", figure: result.latencies.p99, unit: "ms" }),
        row({ benchmark: "8 soak", db: kind, name: "heap trend", figure: heapSlope, unit: "MiB/min", target: `steady (≤ ${steadyMiBPerMinute} MiB/min)` }, { on: "figure", atMost: steadyMiBPerMinute }),
        row({ benchmark: "8 soak", db: kind, name: "RSS trend", figure: rssSlope, unit: "MiB/min" }),
      ],
      details: { maximum, rate, result, samples },
      notes: [
        `soak [${kind}]: RSS ${samples[0]?.rss.toFixed(0)} → ${samples[samples.length - 1]?.rss.toFixed(0)} MiB, heap ${samples[0]?.heapUsed.toFixed(0)} → ${samples[samples.length - 1]?.heapUsed.toFixed(0)} MiB over ${samples.length} samples`,
        ...(result.errors > 0 ? [`soak [${kind}]: ${result.errors} errors (${result.firstError ?? ""}), statuses ${JSON.stringify(result.statuses)}`] : []),
      ],
    };
  },
};
