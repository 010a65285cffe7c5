/**
 * The contract every LLM adapter keeps, run against each one: the vendor adapters over real HTTP to a fake server
 * speaking their protocol, and the built-in agent wherever a behaviour applies to it.
 */
import assert from "node:assert/strict";
import { after, before, beforeEach, describe, it } from "node:test";
import { AnthropicProvider } from "../../../src/providers/llm/anthropic.js";
import { BuiltinProvider } from "../../../src/providers/llm/builtin.js";
import type { HttpProviderOptions } from "../../../src/providers/llm/http-provider.js";
import { OpenAiProvider } from "../../../src/providers/llm/openai.js";
import { ProviderError, type LlmOutput, type LlmProvider, type LlmRequest, type ToolSpec } from "../../../src/providers/llm/types.js";
import { startFakeAnthropic, startFakeOpenAi, type FakeLlmServer } from "../../support/fake-llm-servers.js";
import { collect, failureOf } from "./helpers.js";

interface VendorHarness {
  name: string;
  start(): Promise<FakeLlmServer>;
  create(url: string, options: HttpProviderOptions): LlmProvider;
  /** Checks that model, temperature, max_tokens and the system prompt travel the way the vendor documents. */
  assertBody(body: unknown): void;
  /** Checks that offered tools, the tool choice and an earlier round travel the way the vendor documents. */
  assertToolBody(body: unknown): void;
}

const lookupTool: ToolSpec = {
  name: "lookup_order",
  description: "Finds an order.",
  parameters: { type: "object", properties: { order: { type: "string" } }, required: ["order"] },
};

const toolRequest: LlmRequest = {
  ...{ task: "reply" as const, messages: [{ role: "system" as const, content: "Be brief." }, { role: "user" as const, content: "Where is A1?" }] },
  tools: [lookupTool],
  toolChoice: "none",
  toolRounds: [{ text: "Checking.", calls: [{ id: "call_1", name: "lookup_order", arguments: '{"order":"A1"}' }], results: [{ id: "call_1", content: '{"status":"shipped"}' }] }],
};

async function outputsOf(stream: AsyncIterable<LlmOutput>): Promise<LlmOutput[]> {
  const outputs: LlmOutput[] = [];
  for await (const output of stream) outputs.push(output);
  return outputs;
}

const settings = { model: "test-model", temperature: 0.3, maxTokens: 321, apiKey: "sk-test-key-0123456789" };

const request: LlmRequest = {
  task: "reply",
  messages: [
    { role: "system", content: "You are Parley's test agent." },
    { role: "user", content: "Say hello." },
  ],
};

const harnesses: VendorHarness[] = [
  {
    name: "openai",
    start: () => startFakeOpenAi(),
    create: (url, options) => new OpenAiProvider({ ...settings, baseUrl: url }, options),
    assertBody(body) {
      assert.deepEqual(body, {
        model: "test-model",
        messages: [
          { role: "system", content: "You are Parley's test agent." },
          { role: "user", content: "Say hello." },
        ],
        temperature: 0.3,
        max_tokens: 321,
        stream: true,
        stream_options: { include_usage: true },
      });
    },
    assertToolBody(body) {
      const sent = body as { messages: unknown[]; tools: unknown; tool_choice: unknown };
      assert.deepEqual(sent.tools, [{ type: "function", function: { name: "lookup_order", description: "Finds an order.", parameters: lookupTool.parameters } }]);
      assert.equal(sent.tool_choice, "none");
      assert.deepEqual(sent.messages.slice(2), [
        { role: "assistant", content: "Checking.", tool_calls: [{ id: "call_1", type: "function", function: { name: "lookup_order", arguments: '{"order":"A1"}' } }] },
        { role: "tool", tool_call_id: "call_1", content: '{"status":"shipped"}' },
      ]);
    },
  },
  {
    name: "anthropic",
    start: () => startFakeAnthropic(),
    create: (url, options) => new AnthropicProvider({ ...settings, baseUrl: url }, options),
    assertBody(body) {
      assert.deepEqual(body, {
        model: "test-model",
        max_tokens: 321,
        temperature: 0.3,
        system: "You are Parley's test agent.",
        messages: [{ role: "user", content: "Say hello." }],
        stream: true,
      });
    },
    assertToolBody(body) {
      const sent = body as { messages: unknown[]; tools: unknown; tool_choice: unknown };
      assert.deepEqual(sent.tools, [{ name: "lookup_order", description: "Finds an order.", input_schema: lookupTool.parameters }]);
      assert.deepEqual(sent.tool_choice, { type: "none" });
      assert.deepEqual(sent.messages.slice(1), [
        { role: "assistant", content: [{ type: "text", text: "Checking." }, { type: "tool_use", id: "call_1", name: "lookup_order", input: { order: "A1" } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "call_1", content: '{"status":"shipped"}' }] },
      ]);
    },
  },
];

const fast: HttpProviderOptions = { timeoutMs: 2_000, retryDelayMs: 10 };

for (const harness of harnesses) {
  describe(`the ${harness.name} adapter`, () => {
    let server: FakeLlmServer;
    before(async () => {
      server = await harness.start();
    });
    after(() => server.close());
    beforeEach(() => server.setBehaviour({}));

    it("streams deltas that concatenate to the full reply", async () => {
      const chunks = ["Bonjour", ", ", "ça va", " 👋", "?"];
      server.setBehaviour({ chunks });
      const deltas = await collect(harness.create(server.url, fast).stream(request));
      assert.deepEqual(deltas, chunks);
    });

    it("parses events split across packets and CRLF line endings", async () => {
      const chunks = ["naïve ", "日本語 ", "🎉"];
      server.setBehaviour({ chunks, splitWrites: true, lineEnding: "\r\n" });
      const deltas = await collect(harness.create(server.url, fast).stream(request));
      assert.equal(deltas.join(""), chunks.join(""));
    });

    it("sends model, temperature, max_tokens and the system prompt as the vendor expects", async () => {
      const earlier = server.requests.length;
      await collect(harness.create(server.url, fast).stream(request));
      const sent = server.requests[earlier];
      assert.ok(sent);
      harness.assertBody(sent.json);
    });

    it("retries once after an upstream 500 and then succeeds", async () => {
      server.setBehaviour([{ status: 500 }, { chunks: ["second ", "try"] }]);
      const earlier = server.requests.length;
      const deltas = await collect(harness.create(server.url, fast).stream(request));
      assert.equal(deltas.join(""), "second try");
      assert.equal(server.requests.length - earlier, 2);
    });

    it("fails with a retryable ProviderError when rate limited twice", async () => {
      server.setBehaviour({ status: 429, errorMessage: "slow down" });
      const earlier = server.requests.length;
      const error = await failureOf(harness.create(server.url, fast).stream(request));
      assert.equal(error.options.status, 429);
      assert.equal(error.options.retryable, true);
      assert.match(error.message, /429.*slow down/);
      assert.equal(server.requests.length - earlier, 2);
    });

    it("does not retry a 400 and reports the vendor's message", async () => {
      server.setBehaviour({ status: 400, errorMessage: "max_tokens is too large" });
      const earlier = server.requests.length;
      const error = await failureOf(harness.create(server.url, fast).stream(request));
      assert.equal(error.options.status, 400);
      assert.equal(error.options.retryable, false);
      assert.match(error.message, /max_tokens is too large/);
      assert.equal(server.requests.length - earlier, 1);
    });

    it("never echoes the API key from an upstream error body", async () => {
      server.setBehaviour({ status: 401, errorMessage: `Incorrect API key provided: ${settings.apiKey}` });
      const error = await failureOf(harness.create(server.url, fast).stream(request));
      assert.equal(error.options.status, 401);
      assert.doesNotMatch(error.message, /0123456789/);
      assert.match(error.message, /Incorrect API key provided/);
    });

    it("waits for a slow first token that arrives within the budget", async () => {
      server.setBehaviour({ firstChunkDelayMs: 150, chunks: ["late ", "but fine"] });
      const earlier = server.requests.length;
      const deltas = await collect(harness.create(server.url, { timeoutMs: 2_000, firstTokenTimeoutMs: 1_000 }).stream(request));
      assert.equal(deltas.join(""), "late but fine");
      assert.equal(server.requests.length - earlier, 1);
    });

    it("times out when the first token comes later than its budget, after one retry", async () => {
      server.setBehaviour({ firstChunkDelayMs: 5_000 });
      const earlier = server.requests.length;
      const started = Date.now();
      const error = await failureOf(harness.create(server.url, { timeoutMs: 400, retryDelayMs: 10 }).stream(request));
      assert.equal(error.options.timedOut, true);
      assert.equal(server.requests.length - earlier, 2);
      assert.ok(Date.now() - started < 1_500, "the overall budget bounds the call, retry included");
    });

    it("times out when the server never answers at all", async () => {
      server.setBehaviour({ hang: true });
      const error = await failureOf(harness.create(server.url, { timeoutMs: 300, retryDelayMs: 10 }).stream(request));
      assert.equal(error.options.timedOut, true);
    });

    it("fails after yielding some deltas when the connection is cut mid-stream, without retrying", async () => {
      server.setBehaviour({ chunks: ["one ", "two ", "three"], cutAfterChunks: 2 });
      const earlier = server.requests.length;
      const deltas: string[] = [];
      const error = await failureOf(harness.create(server.url, fast).stream(request), deltas);
      assert.deepEqual(deltas, ["one ", "two "]);
      assert.equal(error.options.retryable, true);
      assert.equal(server.requests.length - earlier, 1);
    });

    it("treats a stream that ends cleanly without its end marker as a failure, not a short answer", async () => {
      server.setBehaviour({ chunks: ["partial"], omitEnd: true });
      const deltas: string[] = [];
      const error = await failureOf(harness.create(server.url, fast).stream(request), deltas);
      assert.deepEqual(deltas, ["partial"]);
      assert.match(error.message, /ended before/);
    });

    it("surfaces an error event inside the stream as a ProviderError", async () => {
      server.setBehaviour({ chunks: ["some "], streamError: true, errorMessage: "the model is overloaded" });
      const deltas: string[] = [];
      const error = await failureOf(harness.create(server.url, fast).stream(request), deltas);
      assert.deepEqual(deltas, ["some "]);
      assert.match(error.message, /the model is overloaded/);
    });

    it("retries an error event that arrives before any text", async () => {
      server.setBehaviour([{ chunks: [], streamError: true }, { chunks: ["recovered"] }]);
      const earlier = server.requests.length;
      const deltas = await collect(harness.create(server.url, fast).stream(request));
      assert.equal(deltas.join(""), "recovered");
      assert.equal(server.requests.length - earlier, 2);
    });

    it("stops streaming when the caller aborts", async () => {
      server.setBehaviour({ chunks: ["a ", "b ", "c ", "d ", "e"], chunkDelayMs: 50 });
      const controller = new AbortController();
      const deltas: string[] = [];
      const stream = harness.create(server.url, fast).stream({ ...request, signal: controller.signal });
      const error = await failureOf(stream, deltas, () => controller.abort());
      assert.deepEqual(deltas, ["a "]);
      assert.equal(error.options.retryable, false);
    });

    it("assembles two tool calls of one round from streamed pieces, after the text said before them", async () => {
      server.setBehaviour({
        chunks: ["Let me ", "check."],
        toolCalls: [
          { name: "lookup_order", arguments: { order: "A1", note: "gift, \"urgent\"" } },
          { name: "weather", arguments: { city: "Zürich" } },
        ],
      });
      const outputs = await outputsOf(harness.create(server.url, fast).respond({ ...request, tools: [lookupTool] }));
      const text = outputs.flatMap((output) => (output.type === "text" ? [output.text] : [])).join("");
      assert.equal(text, "Let me check.");
      const rounds = outputs.filter((output) => output.type === "tool_calls");
      assert.equal(rounds.length, 1, "all the calls of a round come together, once");
      const calls = rounds[0]?.type === "tool_calls" ? rounds[0].calls : [];
      assert.deepEqual(calls.map((call) => [call.name, JSON.parse(call.arguments)]), [
        ["lookup_order", { order: "A1", note: 'gift, "urgent"' }],
        ["weather", { city: "Zürich" }],
      ]);
      assert.equal(new Set(calls.map((call) => call.id)).size, 2, "each call has its own id");
      assert.deepEqual(await collect(harness.create(server.url, fast).stream({ ...request, tools: [lookupTool] })), ["Let me ", "check."]);
    });

    it("reads tool calls sent whole, each in one event", async () => {
      server.setBehaviour({ toolCalls: [{ id: "c1", name: "lookup_order", arguments: { order: "B2" } }, { id: "c2", name: "lookup_order", arguments: { order: "C3" } }], toolCallsWhole: true });
      const outputs = await outputsOf(harness.create(server.url, fast).respond({ ...request, tools: [lookupTool] }));
      assert.deepEqual(outputs.filter((output) => output.type !== "usage"), [
        { type: "tool_calls", calls: [{ id: "c1", name: "lookup_order", arguments: '{"order":"B2"}' }, { id: "c2", name: "lookup_order", arguments: '{"order":"C3"}' }] },
      ]);
    });

    it("sends the offered tools, the tool choice and the earlier rounds as the vendor documents", async () => {
      const earlier = server.requests.length;
      await outputsOf(harness.create(server.url, fast).respond(toolRequest));
      harness.assertToolBody(server.requests[earlier]?.json);
    });

    it("reports the tokens the response used", async () => {
      server.setBehaviour({ chunks: ["ok"], usage: { input: 42, output: 7 } });
      const outputs = await outputsOf(harness.create(server.url, fast).respond(request));
      assert.deepEqual(outputs.at(-1), { type: "usage", usage: { inputTokens: 42, outputTokens: 7 } });
    });

    it("fails with a retryable ProviderError when the server cannot be reached", async () => {
      const closed = await harness.start();
      await closed.close();
      const error = await failureOf(harness.create(closed.url, fast).stream(request));
      assert.equal(error.options.retryable, true);
      assert.match(error.message, /could not reach/);
    });
  });
}

describe("the builtin adapter", () => {
  const provider = new BuiltinProvider({
    greeting: "Welcome to the test shop, how can I help?",
    fallback: "Sorry, I do not know that.",
    knowledge: [{ question: "When are you open?", answer: "We are open from nine to five, Monday to Friday." }],
  });
  const question: LlmRequest = { task: "reply", messages: [{ role: "user", content: "What are your opening hours?" }] };

  it("streams deltas that concatenate to the full reply", async () => {
    const deltas = await collect(provider.stream(question));
    assert.ok(deltas.length > 1);
    assert.equal(deltas.join(""), "We are open from nine to five, Monday to Friday.");
  });

  it("calls no tools: offered some, it answers with text only", async () => {
    const outputs = await outputsOf(provider.respond({ ...question, tools: [lookupTool] }));
    assert.ok(outputs.length > 1);
    assert.ok(outputs.every((output) => output.type === "text"));
  });

  it("answers the same request with the same deltas every time", async () => {
    assert.deepEqual(await collect(provider.stream(question)), await collect(provider.stream(question)));
  });

  it("stops streaming when the caller aborts", async () => {
    const controller = new AbortController();
    const deltas: string[] = [];
    const error = await failureOf(provider.stream({ ...question, signal: controller.signal }), deltas, () => controller.abort());
    assert.deepEqual(deltas, ["We "]);
    assert.ok(error instanceof ProviderError);
  });
});
