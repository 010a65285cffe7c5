/**
 * 3. What Parley adds to the time to first token: a streaming chat through Parley (openai provider pointed at the
 * fake server) against the same fake server called directly with a prompt of the same size, one request at a time,
 * the paths interleaved so that all see the same machine. A third path is the same turn served by a bare node:http
 * server doing only the work Parley must do before a first token, in Parley's order, through Parley's own store
 * (lib/bare-chat-server.ts): what is left above it is Parley's own. On PostgreSQL a fourth, interleaved too, is a
 * durable commit of a one-row update on the same server.
 */
import type { Benchmark } from "./lib/benchmark.js";
import pg from "pg";
import { chatQuestion, type BenchContext } from "./lib/context.js";
import { cpuMeter } from "./lib/cpu.js";
import { timedPost } from "./lib/http.js";
import { benchFile, startChild } from "./lib/children.js";
import { seed } from "./lib/seed.js";
import { row, type BenchmarkResult, type Row } from "./lib/report.js";
import { summarize } from "./lib/stats.js";

const reply = ["Hello", " there", "!"];

/** Times durable commits of a one-row update in a database of its own on the benchmark's PostgreSQL. */
async function commitProbe(context: BenchContext): Promise<{ commit(): Promise<number>; close(): Promise<void> }> {
  const database = await context.postgresDatabase();
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  await client.query("CREATE TABLE commit_probe (id integer PRIMARY KEY, n integer NOT NULL); INSERT INTO commit_probe VALUES (1, 0)");
  const update = { name: "commit_probe", text: "UPDATE commit_probe SET n = n + 1 WHERE id = $1", values: [1] };
  return {
    async commit() {
      const started = performance.now();
      await client.query(update);
      return performance.now() - started;
    },
    close: () => client.end(),
  };
}

const noProbe = { commit: async () => 0, close: async () => undefined };

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
      const probe = kind === "postgres" ? await commitProbe(context) : noProbe;
      const seeded = await seed(context, kind, 1);
      const bareChat = await startChild<{ port: number }>(benchFile("lib/bare-chat-server.ts"), {
        FAKE_PORT: String(fake.port),
        ...(kind === "postgres" ? { DATABASE_URL: seeded.location } : { DATA_DIR: seeded.location }),
      });
      await bareChat.call("thread", seeded.threads[0]);
      const sameWork = () => timedPost(bareChat.info.port, "/chat", {}, { thread_id: seeded.threads[0]!.threadId, message: chatQuestion, streaming: true }, /"token"/);
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
        await sameWork();
      }
      const parleyTtft: number[] = [];
      const directTtft: number[] = [];
      const sameWorkTtft: number[] = [];
      const commits: number[] = [];
      // Parley is idle while the fake is called directly, so its CPU over the run is that of its chats; the fake
      // serves the three paths, a third of its CPU each.
      const parleyCpu = await parley.cpu();
      const fakeCpu = await cpuMeter(async () => [fake.pid]);
      for (let i = 0; i < samples; i++) {
        parleyTtft.push((await viaParley()).ttft);
        directTtft.push((await direct()).ttft);
        sameWorkTtft.push((await sameWork()).ttft);
        // In a database of its own, on a backend the CPU meters do not count.
        if (kind === "postgres") commits.push(await probe.commit());
      }
      const parleyUsed = await parleyCpu.stop();
      const fakeUs = ((await fakeCpu.stop()) * 1e6) / (3 * samples);
      await probe.close();
      await bareChat.stop();
      await parley.stop();
      const through = summarize(parleyTtft);
      const directOnly = summarize(directTtft);
      const ownWork = summarize(sameWorkTtft);
      const chatUs = ((parleyUsed.server + parleyUsed.postgres) * 1e6) / samples;
      const commit = kind === "postgres" ? summarize(commits) : undefined;
      details[kind] = {
        parley: through,
        direct: directOnly,
        sameWorkBareServer: ownWork,
        ...(commit ? { durableCommit: commit } : {}),
        cpu: { parleyServerUs: (parleyUsed.server * 1e6) / samples, postgresUs: (parleyUsed.postgres * 1e6) / samples, fakeUs },
      };
      rows.push(
        row(
          {
            benchmark: "3 TTFT overhead",
            db: kind,
            name: "added time to first token, p50",
            figure: through.p50 - directOnly.p50,
            unit: "ms",
            baseline: directOnly.p50,
            baselineLabel: "direct TTFT p50",
            withoutRatio: true,
            ...(kind === "postgres" ? { target: "≤ 1 ms" } : {}),
          },
          kind === "postgres" ? { on: "figure", atMost: 1 } : undefined,
        ),
        row({
          benchmark: "3 TTFT overhead",
          db: kind,
          name: "added time to first token above its own statements and model call on bare node:http, p50",
          figure: through.p50 - ownWork.p50,
          unit: "ms",
          baseline: ownWork.p50,
          baselineLabel: "same work, bare server, TTFT p50",
          withoutRatio: true,
        }),
        row({ benchmark: "3 TTFT overhead", db: kind, name: "CPU per streamed chat (server + database)", figure: chatUs, unit: "µs", baseline: fakeUs, baselineLabel: "fake provider per request" }),
        row({ benchmark: "3 TTFT overhead", db: kind, name: "added time to first token, p99", figure: through.p99 - directOnly.p99, unit: "ms", baseline: directOnly.p99, baselineLabel: "direct TTFT p99", withoutRatio: true }),
      );
      // The user's message commits durably before its first token leaves: this disk's commit is a floor under the
      // added time, less what the model's own time to first token hides of it.
      if (commit) rows.push(row({ benchmark: "3 TTFT overhead", db: kind, name: "durable commit of a one-row update, p50 (interleaved)", figure: commit.p50, unit: "ms", baseline: commit.p99, baselineLabel: "p99", withoutRatio: true }));
    }
    return { rows, details, notes: [] };
  },
};
