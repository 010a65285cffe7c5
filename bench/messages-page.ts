/**
 * 1. `GET /threads/{id}/messages` (a page of 20) under keep-alive load from a generator process, against a bare
 * `node:http` server answering the very same bytes (headers and a new request id included): what Parley's HTTP
 * stack, auth, page cache, logging and metrics cost.
 */
import type { Benchmark } from "./lib/benchmark.js";
import { chatQuestion, helpDeskConfig, type BenchContext } from "./lib/context.js";
import { api, rawRequest } from "./lib/http.js";
import { cpuMeter } from "./lib/cpu.js";
import { alternate, describeCpu, loadWithCpu, mergeCpu } from "./lib/measure.js";
import { row, type BenchmarkResult, type Row } from "./lib/report.js";

const connections = 64;

export const messagesPage: Benchmark = {
  name: "messages",
  byDefault: true,
  async run(context: BenchContext): Promise<BenchmarkResult> {
    const rows: Row[] = [];
    const details: Record<string, unknown> = {};
    const notes: string[] = [];
    for (const kind of context.options.dbs) {
      const parley = await context.parley(kind);
      const tenant = await context.tenant(parley, helpDeskConfig);
      const [threadId] = await context.threads(parley, tenant, 1);
      for (let turn = 0; turn < 10; turn++) {
        await api(parley.base, "POST", "/chat", tenant.apiKey, { thread_id: threadId, message: `${chatQuestion} (${turn})`, service_config_name: tenant.projectName });
      }
      const path = `/threads/${threadId}/messages`;
      const page = await fetch(parley.base + path, { headers: { authorization: tenant.apiKey } });
      const body = await page.text();
      const count = (JSON.parse(body) as { messages: unknown[] }).messages.length;
      if (count !== 20) throw new Error(`expected a page of 20 messages, got ${count}`);
      const bare = await context.bareServer(body);
      const requests = [rawRequest("GET", path, { authorization: tenant.apiKey })];
      const bareCpu: { seconds: number; requests: number }[] = [];
      const measured = await alternate(
        context.timing,
        async (window) => {
          const meter = await cpuMeter(async () => [bare.pid]);
          const result = await context.load({ port: bare.port, requests, connections, keepSamples: true, ...window });
          bareCpu.push({ seconds: await meter.stop(), requests: result.total });
          return result;
        },
        (window) => loadWithCpu(context, parley, { requests, connections, keepSamples: true, ...window }),
      );
      await bare.stop();
      await parley.stop();
      const cpu = mergeCpu(measured.bWindows);
      details[kind] = { parley: { ...measured.b, cpu }, bare: measured.a };
      const bareUs = (bareCpu.reduce((sum, w) => sum + w.seconds, 0) * 1e6) / Math.max(1, bareCpu.reduce((sum, w) => sum + w.requests, 0));
      notes.push(`messages [${kind}]: ${describeCpu(cpu, kind)}; bare node:http ${bareUs.toFixed(0)} µs`);
      if (measured.b.errors > 0) notes.push(`messages [${kind}]: ${measured.b.errors} errors (${measured.b.firstError ?? ""})`);
      rows.push(
        row(
          { benchmark: "1 messages page", db: kind, name: "GET 20 messages, req/s", figure: measured.b.perSecond, unit: "req/s", baseline: measured.a.perSecond, baselineLabel: "bare node:http", target: "≥ 70% of bare" },
          { on: "ratio", atLeast: 0.7 },
        ),
        row({ benchmark: "1 messages page", db: kind, name: "CPU per request", figure: cpu.serverUs + cpu.postgresUs, unit: "µs", baseline: bareUs, baselineLabel: "bare" }),
        row({ benchmark: "1 messages page", db: kind, name: `p99 at ${connections} connections`, figure: measured.b.latencies.p99, unit: "ms", baseline: measured.a.latencies.p99, baselineLabel: "bare" }),
      );
    }
    return { rows, details, notes };
  },
};
