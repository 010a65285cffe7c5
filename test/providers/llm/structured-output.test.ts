import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { AnthropicProvider } from "../../../src/providers/llm/anthropic.js";
import { OpenAiProvider } from "../../../src/providers/llm/openai.js";
import type { StructuredOutput } from "../../../src/providers/llm/types.js";
import { startFakeAnthropic, startFakeOpenAi, type FakeLlmServer } from "../../support/fake-llm-servers.js";
import { collect } from "./helpers.js";

const output: StructuredOutput = {
  name: "verdict",
  description: "A verdict.",
  schema: { type: "object", properties: { passed: { type: "boolean" } }, required: ["passed"], additionalProperties: false },
};
const settings = { model: "m", temperature: 0.2, maxTokens: 100, apiKey: "key" };
const messages = [
  { role: "system" as const, content: "Judge." },
  { role: "user" as const, content: "Transcript." },
];

describe("structured output", () => {
  let openai: FakeLlmServer;
  let anthropic: FakeLlmServer;
  before(async () => {
    openai = await startFakeOpenAi({ chunks: ['{"pass', 'ed":true}'] });
    anthropic = await startFakeAnthropic({ chunks: ['{"pass', 'ed":true}'] });
  });
  after(async () => {
    await openai.close();
    await anthropic.close();
  });

  it("openai: asks with response_format json_schema (strict) and streams the object's JSON as text", async () => {
    const provider = new OpenAiProvider({ ...settings, baseUrl: openai.url }, { timeoutMs: 2000 });
    assert.equal((await collect(provider.stream({ messages, task: "analysis", structuredOutput: output }))).join(""), '{"passed":true}');
    const body = openai.requests.at(-1)!.json as Record<string, unknown>;
    assert.deepEqual(body["response_format"], { type: "json_schema", json_schema: { name: "verdict", description: "A verdict.", schema: output.schema, strict: true } });
    await collect(provider.stream({ messages, task: "reply" }));
    assert.equal((openai.requests.at(-1)!.json as Record<string, unknown>)["response_format"], undefined, "only when asked");
  });

  it("anthropic: asks with a forced tool whose input schema is the object's, and streams the tool input's JSON", async () => {
    const provider = new AnthropicProvider({ ...settings, baseUrl: anthropic.url }, { timeoutMs: 2000 });
    assert.equal((await collect(provider.stream({ messages, task: "analysis", structuredOutput: output }))).join(""), '{"passed":true}');
    const body = anthropic.requests.at(-1)!.json as Record<string, unknown>;
    assert.deepEqual(body["tools"], [{ name: "verdict", description: "A verdict.", input_schema: output.schema }]);
    assert.deepEqual(body["tool_choice"], { type: "tool", name: "verdict" });
    assert.equal(body["system"], "Judge.");
  });
});
