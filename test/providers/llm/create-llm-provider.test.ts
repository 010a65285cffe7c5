import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { withDefaults } from "../../../src/domain/projects/project-config.js";
import { createLlmProvider } from "../../../src/providers/llm/index.js";
import { startFakeAnthropic, startFakeOpenAi } from "../../support/fake-llm-servers.js";
import { collect } from "./helpers.js";

const options = { timeoutMs: 2_000 };
const request = { task: "reply" as const, messages: [{ role: "user" as const, content: "Hello?" }] };

describe("createLlmProvider", () => {
  it("builds the offline built-in agent by default", async () => {
    const { agent } = withDefaults({ agent: { greeting: "Welcome." } });
    const provider = createLlmProvider(agent, undefined, options);
    assert.equal(provider.name, "builtin");
    assert.equal((await collect(provider.stream(request))).join(""), "Welcome.");
  });

  it("builds an OpenAI-compatible client from base_url, model and the decrypted key", async () => {
    const server = await startFakeOpenAi({ chunks: ["from ", "openai"] });
    try {
      const { agent } = withDefaults({ agent: { provider: "openai", base_url: server.url, model: "gpt-test", max_tokens: 50 } });
      const provider = createLlmProvider(agent, "sk-123456", options);
      assert.equal(provider.name, "openai");
      assert.equal((await collect(provider.stream(request))).join(""), "from openai");
      assert.equal(server.requests[0]?.headers["authorization"], "Bearer sk-123456");
      assert.deepEqual(server.requests[0]?.json, {
        model: "gpt-test",
        messages: [{ role: "user", content: "Hello?" }],
        temperature: 0.7,
        max_tokens: 50,
        stream: true,
        stream_options: { include_usage: true },
      });
    } finally {
      await server.close();
    }
  });

  it("builds an Anthropic client from base_url, model and the decrypted key", async () => {
    const server = await startFakeAnthropic({ chunks: ["from ", "anthropic"] });
    try {
      const { agent } = withDefaults({ agent: { provider: "anthropic", base_url: server.url, model: "claude-test" } });
      const provider = createLlmProvider(agent, "ak-123456", options);
      assert.equal(provider.name, "anthropic");
      assert.equal((await collect(provider.stream(request))).join(""), "from anthropic");
      assert.equal(server.requests[0]?.headers["x-api-key"], "ak-123456");
    } finally {
      await server.close();
    }
  });
});
