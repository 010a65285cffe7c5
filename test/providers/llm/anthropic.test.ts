import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { AnthropicProvider, toAnthropicPrompt, type AnthropicSettings } from "../../../src/providers/llm/anthropic.js";
import type { LlmRequest } from "../../../src/providers/llm/types.js";
import { startFakeAnthropic, type FakeLlmServer } from "../../support/fake-llm-servers.js";
import { collect, failureOf, startRawServer, type RawServer } from "./helpers.js";

const settings: Omit<AnthropicSettings, "baseUrl"> = { model: "claude-test", temperature: 1.7, maxTokens: 99, apiKey: "ak-secret" };
const request: LlmRequest = { task: "reply", messages: [{ role: "user", content: "Hi" }] };
const options = { timeoutMs: 1_000, retryDelayMs: 1 };

const event = (type: string, data: Record<string, unknown>, named = true): string =>
  `${named ? `event: ${type}\n` : ""}data: ${JSON.stringify({ type, ...data })}\n\n`;

describe("toAnthropicPrompt", () => {
  it("moves system messages into the system prompt and merges consecutive turns of one role", () => {
    const prompt = toAnthropicPrompt([
      { role: "system", content: "Be brief." },
      { role: "user", content: "First." },
      { role: "user", content: "Second." },
      { role: "system", content: "Answer in French." },
      { role: "assistant", content: "Oui." },
      { role: "assistant", content: "Et puis ?" },
      { role: "user", content: "Third." },
    ]);
    assert.deepEqual(prompt, {
      system: "Be brief.\n\nAnswer in French.",
      turns: [
        { role: "user", content: "First.\n\nSecond." },
        { role: "assistant", content: "Oui.\n\nEt puis ?" },
        { role: "user", content: "Third." },
      ],
    });
  });

  it("opens with a user turn when the agent spoke first", () => {
    const { turns } = toAnthropicPrompt([
      { role: "assistant", content: "Welcome!" },
      { role: "user", content: "Thanks." },
    ]);
    assert.equal(turns[0]?.role, "user");
    assert.deepEqual(turns.slice(1), [
      { role: "assistant", content: "Welcome!" },
      { role: "user", content: "Thanks." },
    ]);
  });

  it("ends with a user turn so that a last agent message is answered rather than continued", () => {
    const { turns } = toAnthropicPrompt([
      { role: "user", content: "Hello" },
      { role: "assistant", content: "Hi, anything else?" },
    ]);
    assert.deepEqual(
      turns.map((turn) => turn.role),
      ["user", "assistant", "user"],
    );
  });

  it("still produces one user turn for a prompt with only system messages", () => {
    const prompt = toAnthropicPrompt([{ role: "system", content: "Greet the user." }]);
    assert.equal(prompt.system, "Greet the user.");
    assert.equal(prompt.turns.length, 1);
    assert.equal(prompt.turns[0]?.role, "user");
  });
});

describe("the anthropic adapter", () => {
  let server: FakeLlmServer;
  const rawServers: RawServer[] = [];
  before(async () => {
    server = await startFakeAnthropic();
  });
  after(() => Promise.all([server.close(), ...rawServers.map((raw) => raw.close())]));

  /** An adapter whose base URL ends in /v1/, pointed at a server answering every call with `body`. */
  async function provider(body: string) {
    const raw = await startRawServer(body);
    rawServers.push(raw);
    return { calls: raw.calls, provider: new AnthropicProvider({ ...settings, baseUrl: `${raw.url}/v1/` }, options) };
  }

  it("sends the key and API version headers to {base_url}/v1/messages", async () => {
    const earlier = server.requests.length;
    await collect(new AnthropicProvider({ ...settings, baseUrl: server.url }, options).stream(request));
    const sent = server.requests[earlier];
    assert.equal(sent?.path, "/v1/messages");
    assert.equal(sent?.headers["x-api-key"], "ak-secret");
    assert.equal(sent?.headers["anthropic-version"], "2023-06-01");
    assert.equal(sent?.headers["authorization"], undefined);
  });

  it("tolerates a base URL that already ends in /v1 and caps temperature at Anthropic's maximum of 1", async () => {
    const { calls, provider: anthropic } = await provider(event("message_stop", {}));
    await collect(anthropic.stream(request));
    assert.equal(calls[0]?.path, "/v1/messages");
    assert.deepEqual(calls[0]?.body, { model: "claude-test", max_tokens: 99, temperature: 1, messages: [{ role: "user", content: "Hi" }], stream: true });
  });

  it("yields only text deltas, also when a proxy drops the event lines", async () => {
    const body = [
      event("message_start", { message: { id: "m", content: [] } }, false),
      event("content_block_start", { index: 0, content_block: { type: "thinking", thinking: "" } }, false),
      event("content_block_delta", { index: 0, delta: { type: "thinking_delta", thinking: "hmm" } }, false),
      event("content_block_delta", { index: 1, delta: { type: "text_delta", text: "Bon" } }, false),
      event("ping", {}, false),
      event("content_block_delta", { index: 1, delta: { type: "text_delta", text: "jour" } }, false),
      event("message_delta", { delta: { stop_reason: "end_turn" }, usage: { output_tokens: 2 } }, false),
      event("message_stop", {}, false),
    ].join("");
    assert.deepEqual(await collect((await provider(body)).provider.stream(request)), ["Bon", "jour"]);
  });

  it("classifies an error event by Anthropic's error type", async () => {
    const body = `${event("content_block_delta", { index: 0, delta: { type: "text_delta", text: "Hi" } })}${event("error", { error: { type: "overloaded_error", message: "Overloaded" } })}`;
    const { calls, provider: anthropic } = await provider(body);
    const error = await failureOf(anthropic.stream(request));
    assert.equal(error.options.status, 529);
    assert.equal(error.options.retryable, true);
    assert.match(error.message, /overloaded_error: Overloaded/);
    assert.equal(calls.length, 1, "no retry once text was yielded");
  });

  it("does not retry an invalid request reported as an error event", async () => {
    const { calls, provider: anthropic } = await provider(event("error", { error: { type: "invalid_request_error", message: "bad" } }));
    const error = await failureOf(anthropic.stream(request));
    assert.equal(error.options.status, 400);
    assert.equal(calls.length, 1);
  });
});
