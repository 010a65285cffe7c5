import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { OpenAiProvider, type OpenAiSettings } from "../../../src/providers/llm/openai.js";
import type { LlmRequest } from "../../../src/providers/llm/types.js";
import { startFakeOpenAi, type FakeLlmServer } from "../../support/fake-llm-servers.js";
import { collect, failureOf, startRawServer, type RawServer } from "./helpers.js";

const settings: Omit<OpenAiSettings, "baseUrl"> = { model: "llama3", temperature: 1.4, maxTokens: 64, apiKey: undefined };
const request: LlmRequest = { task: "reply", messages: [{ role: "user", content: "Hi" }] };
const options = { timeoutMs: 1_000, retryDelayMs: 1 };

const rawServers: RawServer[] = [];
after(() => Promise.all(rawServers.map((server) => server.close())));

/** An adapter pointed, with a trailing slash, at a server answering every call with `body`. */
async function provider(body: string | Uint8Array[], overrides: Partial<OpenAiSettings> = {}, status = 200) {
  const server = await startRawServer(body, { status });
  rawServers.push(server);
  return { server, calls: server.calls, provider: new OpenAiProvider({ ...settings, baseUrl: `${server.url}/v1/`, ...overrides }, options) };
}

const chunk = (delta: unknown, finish: string | null = null): string =>
  `data: ${JSON.stringify({ choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

describe("the openai adapter", () => {
  let server: FakeLlmServer;
  before(async () => {
    server = await startFakeOpenAi();
  });
  after(() => server.close());

  it("sends the key as a bearer token to {base_url}/chat/completions", async () => {
    const earlier = server.requests.length;
    await collect(new OpenAiProvider({ ...settings, baseUrl: server.url, apiKey: "sk-local" }, options).stream(request));
    const sent = server.requests[earlier];
    assert.equal(sent?.path, "/v1/chat/completions");
    assert.equal(sent?.headers["authorization"], "Bearer sk-local");
    assert.equal(sent?.headers["content-type"], "application/json");
  });

  it("sends no authorization header when the project has no key, as local servers expect", async () => {
    const earlier = server.requests.length;
    await collect(new OpenAiProvider({ ...settings, baseUrl: server.url }, options).stream(request));
    assert.equal(server.requests[earlier]?.headers["authorization"], undefined);
  });

  it("joins the base URL without doubling a trailing slash and leaves out an empty model", async () => {
    const { calls, provider: openai } = await provider(`${chunk({ content: "ok" })}data: [DONE]\n\n`, { model: "" });
    await collect(openai.stream(request));
    assert.equal(calls[0]?.path, "/v1/chat/completions");
    assert.deepEqual(calls[0]?.body, { messages: [{ role: "user", content: "Hi" }], temperature: 1.4, max_tokens: 64, stream: true, stream_options: { include_usage: true } });
  });

  it("ignores role-only, empty and choiceless chunks and keep-alive comments", async () => {
    const body = [
      chunk({ role: "assistant" }),
      ": ping\n\n",
      chunk({ content: "" }),
      chunk({ content: null, tool_calls: [] }),
      chunk({ content: "Hel" }),
      `data: ${JSON.stringify({ object: "chat.completion.chunk" })}\n\n`,
      `data: ${JSON.stringify({ choices: [] , usage: { total_tokens: 3 } })}\n\n`,
      chunk({ content: "lo" }),
      chunk({}, "stop"),
      "data: [DONE]\n\n",
    ].join("");
    assert.deepEqual(await collect((await provider(body)).provider.stream(request)), ["Hel", "lo"]);
  });

  it("accepts a stream that ends after a finish_reason without [DONE], as older llama.cpp servers send", async () => {
    const body = `${chunk({ content: "done" })}${chunk({}, "length")}`;
    assert.deepEqual(await collect((await provider(body)).provider.stream(request)), ["done"]);
  });

  it("classifies an error chunk by its numeric code, as vLLM sends it", async () => {
    const body = `data: ${JSON.stringify({ error: { object: "error", message: "context too long", type: "BadRequestError", code: 400 } })}\n\n`;
    const { calls, provider: openai } = await provider(body);
    const error = await failureOf(openai.stream(request));
    assert.equal(error.options.status, 400);
    assert.equal(error.options.retryable, false);
    assert.match(error.message, /context too long/);
    assert.equal(calls.length, 1);
  });

  it("summarizes an Ollama-style error body", async () => {
    const error = await failureOf((await provider(JSON.stringify({ error: "model 'llama9' not found" }), {}, 404)).provider.stream(request));
    assert.equal(error.message, "openai returned HTTP 404: model 'llama9' not found");
  });

  it("summarizes an HTML error page from a proxy without its markup", async () => {
    const page = "<html><body><h1>502 Bad Gateway</h1><hr><center>nginx</center></body></html>";
    const error = await failureOf((await provider(page, {}, 502)).provider.stream(request));
    assert.equal(error.message, "openai returned HTTP 502: 502 Bad Gateway nginx");
    assert.equal(error.options.retryable, true);
  });

  it("fails on an event that is not JSON without retrying", async () => {
    const { calls, provider: openai } = await provider("data: {not json\n\n");
    const error = await failureOf(openai.stream(request));
    assert.match(error.message, /not JSON/);
    assert.equal(calls.length, 1);
  });

  it("gives the same deltas wherever the socket splits the body, inside a CRLF or a UTF-8 character included", async () => {
    const body = [chunk({ content: "Hé" }), chunk({ content: "llo 👋" }), chunk({}, "stop"), "data: [DONE]\n\n"].join("");
    for (const lineEnding of ["\n", "\r\n"]) {
      const bytes = Buffer.from(body.replaceAll("\n", lineEnding));
      const { server, provider: openai } = await provider("");
      for (let at = 1; at < bytes.length; at++) {
        server.setBody([bytes.subarray(0, at), bytes.subarray(at)]);
        assert.deepEqual(await collect(openai.stream(request)), ["Hé", "llo 👋"], `${JSON.stringify(lineEnding)} split at byte ${at}`);
      }
    }
  });

  it("gives the same deltas when every byte arrives in its own write", async () => {
    const bytes = Buffer.from(`${chunk({ content: "naïve 日本" })}${chunk({}, "stop")}data: [DONE]\r\n\r\n`);
    const { provider: openai } = await provider([...bytes].map((byte) => Uint8Array.of(byte)));
    assert.deepEqual(await collect(openai.stream(request)), ["naïve 日本"]);
  });

  it("accepts a [DONE] that the server closed without a blank line", async () => {
    const body = `${chunk({ content: "last" })}data: [DONE]`;
    assert.deepEqual(await collect((await provider(body)).provider.stream(request)), ["last"]);
  });
});
