/**
 * 3. What Parley adds to the time to first token: a streaming chat through Parley (openai provider pointed at the
 * fake server) against the same fake server called directly with a prompt of the same size, one request at a time,
 * the two paths interleaved so that both see the same machine.
 */
import type { Benchmark } from "./lib/benchmark.js";
import { chatQuestion, type BenchContext } from "./lib/context.js";
import { cpuMeter } from "./lib/cpu.js";
import { timedPost } from "./lib/http.js";
import { row, type BenchmarkResult, type Row } from "./lib/report.js";
import { summarize } from "./lib/stats.js";

const reply = ["Hello", " there", "!"];

/** The body Parley sends once a conversation is at its 40-message history budget. */
function directBody(): unknown {
  const messages: { role: string; content: string }[] = [{ role: "system", content: "You are a helpful assistant.\n\nThe user's timezone is UTC; their local time is Friday." }];
  for (let i = 0; i < 20; i++) messages.push({ role: "user", content: chatQuestion }, { role: "assistant", content: reply.join("") });
  messages.push({ role: "user", content: chatQuestion });
  return { model: "fake-model", messages, temperature: 0.7, max_tokens: 1024, stream: true };
}

export const timeToFirstToken: Benchmark = {
  name: "ttft",
  byDefault: true,
  async run(context: BenchContext): Promise<BenchmarkResult> {
    const rows: Row[] = [];
    const details: Record<string, unknown> = {};
    const samples = context.timing.samples;
    const fake = await context.fakeProvider({ chunks: reply });
    for (const kind of context.options.dbs) {
      const parley = await context.parley(kind);
      const tenant = await context.tenant(parley, { agent: { provider: "openai", base_url: fake.url, model: "fake-model", api_key: "sk-bench-0123456789" } });
      const [threadId] = await context.threads(parley, tenant, 1);
      const viaParley = () =>
        timedPost(parley.port, "/chat", { authorization: tenant.apiKey }, { thread_id: threadId, message: chatQuestion, service_config_name: tenant.projectName, streaming: true }, /"token"/);
      const direct = () => timedPost(fake.port, "/v1/chat/completions", { authorization: "Bearer sk-bench-0123456789" }, directBody(), /"content":"[^"]/);
      // Warm-up: JIT, pooled connections, and a history at its budget.
      for (let i = 0; i < 60; i++) {
        await viaParley();
        await direct();
      }
      const parleyTtft: number[] = [];
      const directTtft: number[] = [];
      // Parley is idle while the fake is called directly, so its CPU over the run is that of its chats; the fake
      // serves both paths, half of its CPU each.
      const parleyCpu = await parley.cpu();
      const fakeCpu = await cpuMeter(async () => [fake.pid]);
      for (let i = 0; i < samples; i++) {
        parleyTtft.push((await viaParley()).ttft);
        directTtft.push((await direct()).ttft);
      }
      const parleyUsed = await parleyCpu.stop();
      const fakeUs = ((await fakeCpu.stop()) * 1e6) / (2 * samples);
      await parley.stop();
      const through = summarize(parleyTtft);
      const bare = summarize(directTtft);
      const chatUs = ((parleyUsed.server + parleyUsed.postgres) * 1e6) / samples;
      details[kind] = { parley: through, direct: bare, cpu: { parleyServerUs: (parleyUsed.server * 1e6) / samples, postgresUs: (parleyUsed.postgres * 1e6) / samples, fakeUs } };
      rows.push(
        row(
          {
            benchmark: "3 TTFT overhead",
            db: kind,
            name: "added time to first token, p50",
            figure: through.p50 - bare.p50,
            unit: "ms",
            baseline: bare.p50,
            baselineLabel: "direct TTFT p50",
            withoutRatio: true,
            ...(kind === "postgres" ? { target: "≤ 1 ms" } : {}),
          },
          kind === "postgres" ? { on: "figure", atMost: 1 } : undefined,
        ),
        row({ benchmark: "3 TTFT overhead", db: kind, name: "CPU per streamed chat (server + database)", figure: chatUs, unit: "µs", baseline: fakeUs, baselineLabel: "fake provider per request" }),
        row({ benchmark: "3 TTFT overhead", db: kind, name: "added time to first token, p99", figure: through.p99 - bare.p99, unit: "ms", baseline: bare.p99, baselineLabel: "direct TTFT p99", withoutRatio: true }),
      );
    }
    return { rows, details, notes: [] };
  },
};
