/**
 * `--only retell`: what Parley's Custom LLM socket adds to a Retell call's turn. Retell sends `response_required`;
 * the time until the first `response` frame with text comes back is measured on a real socket to a listening
 * server, against the same agent asked directly (its first streamed delta, same prompt, no socket, no database).
 * The difference is Parley's share: parsing the frame, the thread lock, storing the caller's utterance, building
 * the prompt. The agent is the built-in one, so the model itself costs next to nothing and the difference shows.
 */
import { createLlmProvider } from "../src/providers/llm/index.js";
import type { PromptMessage } from "../src/providers/llm/types.js";
import { RetellLlmClient, signedWebhook, startFakeRetell } from "../test/providers/voice/fake-retell.js";
import type { Benchmark } from "./lib/benchmark.js";
import type { BenchContext, DbKind } from "./lib/context.js";
import { row, type BenchmarkResult, type Row } from "./lib/report.js";
import { summarize, type LatencySummary } from "./lib/stats.js";
import { startVendorApp } from "./lib/vendor-app.js";

const retellKey = "key_bench_0123456789abcdef0123456789";
const agent = {
  provider: "builtin" as const,
  knowledge: [
    { question: "What are your opening hours?", answer: "We are open from 9 to 5 on weekdays, and from 10 to 2 on Saturdays." },
    { question: "Where is the office located?", answer: "Our office is at 1 Main Street, next to the station." },
  ],
};
const questions = ["What are your opening hours?", "Where is the office located?"];

async function measureSocket(kind: DbKind, context: BenchContext, calls: number, turns: number): Promise<number[]> {
  const retell = await startFakeRetell(retellKey);
  const parley = await startVendorApp(kind, context, {
    agent,
    voice: { provider: "retell", accounts: [{ id: "6f1f6c43-3b8f-4d9e-9a57-2f0c4f1b7a01", phone_numbers: ["+14155550100"] }], retell: { api_key: retellKey, agent_id: "agent_bench", api_base_url: retell.url } },
  }).catch(async (error: unknown) => {
    await retell.close();
    throw error;
  });
  const samples: number[] = [];
  try {
    for (let call = 0; call < calls; call++) {
      const threadId = String((await parley.request("POST", "/threads", {}))["thread_id"]);
      await parley.request("POST", `/voice/${threadId}/phone-call`, { callee: "+14155552671", project_id: parley.projectId });
      const retellId = retell.callIds.at(-1)!;
      const started = await signedWebhook(retellKey, "call_started", { call_id: retellId, call_status: "ongoing", start_timestamp: Date.now() });
      await parley.app.server.inject({ method: "POST", url: "/voice/retell/webhook", headers: { "content-type": "application/json", "x-retell-signature": started.signature }, payload: started.body });
      const llm = await RetellLlmClient.connect(parley.wsBase, retellId);
      const transcript: { role: string; content: string }[] = [];
      for (let turn = 1; turn <= turns; turn++) {
        transcript.push({ role: "user", content: questions[turn % questions.length]! });
        const sent = performance.now();
        llm.send({ interaction_type: "response_required", response_id: turn, transcript });
        await llm.until((frames) => frames.find((frame) => frame.response_id === turn && frame.response_type === "response" && (frame.content ?? "") !== ""));
        samples.push(performance.now() - sent);
        const reply = await llm.response(turn);
        transcript.push({ role: "agent", content: reply.text });
      }
      llm.close();
      await parley.request("DELETE", `/voice/${threadId}/phone-call`);
    }
  } finally {
    await parley.close();
    await retell.close();
  }
  return samples;
}

/** The same agent, same prompt shape, asked directly: the time to its first streamed delta. */
async function measureDirect(samplesWanted: number, turns: number): Promise<number[]> {
  const provider = createLlmProvider(
    { ...agent, model: "builtin-retrieval-1", base_url: "", system_prompt: "You are a helpful assistant.", greeting: "Hello!", fallback: "Sorry.", temperature: 0.7, max_history_messages: 40, max_tokens: 1024, followup_prompt: "", summary_prompt: "" },
    undefined,
    { timeoutMs: 10_000 },
  );
  const samples: number[] = [];
  while (samples.length < samplesWanted) {
    const messages: PromptMessage[] = [{ role: "system", content: "You are a helpful assistant." }];
    for (let turn = 1; turn <= turns && samples.length < samplesWanted; turn++) {
      messages.push({ role: "user", content: questions[turn % questions.length]! });
      const started = performance.now();
      let reply = "";
      let first = true;
      for await (const delta of provider.stream({ messages, task: "reply" })) {
        if (first) {
          samples.push(performance.now() - started);
          first = false;
        }
        reply += delta;
      }
      messages.push({ role: "assistant", content: reply });
    }
  }
  return samples;
}

export const retellSocket: Benchmark = {
  name: "retell",
  byDefault: false,
  async run(context: BenchContext): Promise<BenchmarkResult> {
    const calls = context.options.quick ? 5 : 20;
    const turns = 10;
    const rows: Row[] = [];
    const details: Record<string, LatencySummary> = {};
    const direct = summarize(await measureDirect(calls * turns, turns));
    details["direct"] = direct;
    for (const kind of context.options.dbs) {
      const socket = summarize(await measureSocket(kind, context, calls, turns));
      details[kind] = socket;
      for (const p of ["p50", "p99"] as const) {
        rows.push(
          row({ benchmark: "retell socket", db: kind, name: `response_required → first chunk ${p}`, figure: socket[p], unit: "ms", baseline: direct[p], baselineLabel: "agent called directly", target: "info", withoutRatio: true }),
          row({ benchmark: "retell socket", db: kind, name: `added by the socket ${p}`, figure: socket[p] - direct[p], unit: "ms", target: "info" }),
        );
      }
    }
    return { rows, details, notes: [`retell socket: ${calls} calls × ${turns} turns per database, built-in agent`] };
  },
};
