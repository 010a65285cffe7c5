import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { after, before, test } from "node:test";
import { changeTags } from "../../src/domain/cache/invalidation.js";
import { forEachDatabase, type Harness } from "../support/harness.js";
import { afterNotified } from "../support/invalidations.js";
import { startFakeAnthropic, startFakeOpenAi, type FakeLlmServer } from "../support/fake-llm-servers.js";
import { eventually } from "../support/polling.js";

interface HistoryPage {
  messages: { role: string; message: string }[];
}

async function history(h: Harness, apiKey: string, threadId: string): Promise<HistoryPage["messages"]> {
  return (await h.request({ method: "GET", url: `/threads/${threadId}/messages`, headers: { authorization: apiKey } })).json<HistoryPage>().messages;
}

forEachDatabase(
  "POST /chat through vendor model providers",
  (h) => {
    let openai: FakeLlmServer;
    let anthropic: FakeLlmServer;
    before(async () => {
      openai = await startFakeOpenAi();
      anthropic = await startFakeAnthropic();
    });
    after(async () => {
      await openai.close();
      await anthropic.close();
    });

    async function setup(provider: "openai" | "anthropic", agent: Record<string, unknown> = {}) {
      const server = provider === "openai" ? openai : anthropic;
      const { apiKey, projectId } = await h().organization({
        agent: { provider, model: "test-model", base_url: server.url, api_key: "vendor-key", system_prompt: "Serve {{name}} kindly.", ...agent },
        pricing: { message_usd: 0.01 },
      });
      const threadId = await h().thread(apiKey, { timezone: "Asia/Tokyo", json_input: '{"name":"Ada"}' });
      return { apiKey, projectId, threadId, server };
    }

    function chat(apiKey: string, payload: Record<string, unknown>) {
      return h().request({ method: "POST", url: "/chat", headers: { authorization: apiKey }, payload: { service_config_name: "support", ...payload } });
    }

    for (const provider of ["openai", "anthropic"] as const) {
      test(`${provider}: the reply streams from the vendor and the prompt carries context, timezone and history`, async () => {
        const { apiKey, threadId, server } = await setup(provider, { max_history_messages: 2 });
        server.setBehaviour({ chunks: ["Hello", " Ada", "!"] });
        await chat(apiKey, { thread_id: threadId, message: "first" });
        await chat(apiKey, { thread_id: threadId, message: "second" });
        const before = server.requests.length;
        const streamed = await chat(apiKey, { thread_id: threadId, message: "third", streaming: true });
        const lines = streamed.body.trim().split("\n").map((line) => JSON.parse(line) as { token?: string; message?: string });
        assert.deepEqual(lines.slice(0, -1).map((line) => line.token), ["Hello", " Ada", "!"]);
        assert.equal(lines.at(-1)!.message, "Hello Ada!");
        const sent = server.requests[before]!;
        const body = sent.json as { model: string; messages: { role: string; content: string }[]; system?: string };
        assert.equal(body.model, "test-model");
        const system = provider === "openai" ? body.messages[0]!.content : String(body.system);
        assert.match(system, /Serve Ada kindly\./);
        assert.match(system, /Asia\/Tokyo/);
        const conversation = (provider === "openai" ? body.messages.slice(1) : body.messages).map((m) => m.content);
        assert.deepEqual(conversation, ["second", "Hello Ada!", "third"], "two history messages, then the user's");
        assert.equal(provider === "openai" ? sent.headers.authorization : sent.headers["x-api-key"], provider === "openai" ? "Bearer vendor-key" : "vendor-key");
      });

      test(`${provider}: a new context, time zone or configuration reaches the next prompt, however it was written`, async () => {
        const { apiKey, projectId, threadId, server } = await setup(provider);
        server.setBehaviour({ chunks: ["ok"] });
        const systemOfNextChat = async () => {
          const before = server.requests.length;
          assert.equal((await chat(apiKey, { thread_id: threadId, message: "hi" })).status, 200);
          const body = server.requests[before]!.json as { messages: { content: string }[]; system?: string };
          return provider === "openai" ? body.messages[0]!.content : String(body.system);
        };
        assert.match(await systemOfNextChat(), /Serve Ada kindly\./);
        const input = await h().request({
          method: "POST",
          url: `/threads/${threadId}/json-input`,
          headers: { authorization: apiKey },
          payload: { project_name: "support", json_input: '{"name":"Grace"}' },
        });
        assert.equal(input.status, 200);
        assert.match(await systemOfNextChat(), /Serve Grace kindly\./, "json_input on this instance");
        const db = h().database.db;
        await afterNotified(db, changeTags.thread(threadId), () =>
          db.query(`UPDATE threads SET context = '{"name":"Lin"}', timezone = 'Europe/Paris' WHERE id = $1`, [threadId]),
        );
        const system = await systemOfNextChat();
        assert.match(system, /Serve Lin kindly\./, "a write behind the instance's back");
        assert.match(system, /Europe\/Paris/);
        const published = await h().admin("PUT", `/admin/projects/${projectId}/config`, {
          config: { agent: { provider, model: "test-model", base_url: server.url, api_key: "vendor-key", system_prompt: "Greet {{name}}." } },
        });
        assert.equal(published.status, 201);
        assert.match(await systemOfNextChat(), /^Greet Lin\./, "a new configuration version");
      });

      test(`${provider}: an upstream failure is a 502 and the user's message stays in the history`, async () => {
        const { apiKey, threadId, server } = await setup(provider);
        server.setBehaviour({ status: 500 });
        const response = await chat(apiKey, { thread_id: threadId, message: "are you there?" });
        assert.equal(response.status, 502);
        assert.equal(typeof response.json<{ detail: string }>().detail, "string");
        assert.ok(!response.body.includes("vendor-key"));
        assert.deepEqual((await history(h(), apiKey, threadId)).map((m) => [m.role, m.message]), [["user", "are you there?"]]);
        server.setBehaviour({ chunks: ["back"] });
        assert.equal((await chat(apiKey, { thread_id: threadId, message: "now?" })).json<{ message: string }>().message, "back");
      });

      test(`${provider}: a stream cut in the middle ends with an error line and stores no half reply`, async () => {
        const { apiKey, threadId, server } = await setup(provider);
        server.setBehaviour({ chunks: ["one ", "two ", "three"], cutAfterChunks: 2 });
        const response = await chat(apiKey, { thread_id: threadId, message: "count", streaming: true });
        assert.equal(response.status, 200);
        const last = JSON.parse(response.body.trim().split("\n").at(-1)!) as { error: string; status_code: number };
        assert.equal(last.status_code, 502);
        assert.equal(typeof last.error, "string");
        assert.deepEqual((await history(h(), apiKey, threadId)).map((m) => m.role), ["user"]);
        server.setBehaviour({ chunks: ["fine"] });
        assert.equal((await chat(apiKey, { thread_id: threadId, message: "again" })).status, 200, "no lock is left behind");
      });
    }

    test("a provider that hangs times out with 504 within the budget and leaves the thread usable", async () => {
      const { apiKey, threadId, server } = await setup("openai");
      server.setBehaviour({ hang: true });
      const started = Date.now();
      const response = await chat(apiKey, { thread_id: threadId, message: "hello?" });
      assert.equal(response.status, 504);
      assert.ok(Date.now() - started < 5_000);
      server.setBehaviour({ chunks: ["ok"] });
      assert.equal((await chat(apiKey, { thread_id: threadId, message: "again" })).status, 200);
    });

    test("a client that disconnects mid-stream does not lose the reply", async () => {
      const { apiKey, threadId, server } = await setup("openai");
      server.setBehaviour({ chunks: ["slow ", "but ", "complete"], chunkDelayMs: 150 });
      const url = await h().server.listen({ port: 0, host: "127.0.0.1" });
      const controller = new AbortController();
      const response = await fetch(`${url}/chat`, {
        method: "POST",
        headers: { authorization: apiKey, "content-type": "application/json" },
        body: JSON.stringify({ thread_id: threadId, message: "tell me", service_config_name: "support", streaming: true }),
        signal: controller.signal,
      });
      const reader = response.body!.getReader();
      await reader.read();
      controller.abort();
      await eventually(async () => (await history(h(), apiKey, threadId)).some((m) => m.role === "assistant"), { what: "the stored reply", timeoutMs: 5_000, intervalMs: 50 });
      assert.deepEqual((await history(h(), apiKey, threadId)).map((m) => m.message), ["tell me", "slow but complete"]);
    });

    test("a streamed turn whose model fails before its first token is a 502, and the user's message is kept", async () => {
      const { apiKey, threadId, server } = await setup("openai");
      server.setBehaviour({ status: 500 });
      const response = await chat(apiKey, { thread_id: threadId, message: "are you there?", streaming: true });
      assert.equal(response.status, 502);
      assert.deepEqual((await history(h(), apiKey, threadId)).map((m) => [m.role, m.message]), [["user", "are you there?"]]);
    });

    test("a commit of the user's message that fails aborts the model call and the turn: no token is sent", async () => {
      const { apiKey, threadId, server } = await setup("openai");
      // A deferred constraint refuses the message at its commit, after a pause in which the model is already
      // streaming (on PostgreSQL the model is asked while the commit flushes; PGlite commits first).
      const suffix = randomUUID().replaceAll("-", "");
      const refused = `refused at commit ${suffix}`;
      const db = h().database.db;
      await db.exec(`
        CREATE FUNCTION refuse_${suffix}() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN PERFORM pg_sleep(0.2); RAISE EXCEPTION 'refused at commit'; END $$;
        CREATE CONSTRAINT TRIGGER refuse_${suffix} AFTER INSERT ON messages DEFERRABLE INITIALLY DEFERRED
          FOR EACH ROW WHEN (NEW.content = '${refused}') EXECUTE FUNCTION refuse_${suffix}();`);
      try {
        server.setBehaviour({ chunks: Array.from({ length: 20 }, (_, i) => `t${i} `), chunkDelayMs: 30 });
        const asked = server.requests.length;
        const response = await chat(apiKey, { thread_id: threadId, message: refused, streaming: true });
        assert.equal(response.status, 500, response.body);
        assert.doesNotMatch(response.body, /"token"/);
        assert.deepEqual(await history(h(), apiKey, threadId), []);
        if (h().database.name === "postgres") {
          assert.equal(server.requests.length, asked + 1, "the model was asked while the commit was flushing");
          assert.ok(server.requests.at(-1)!.chunksSent < 20, "the model call was aborted when the commit failed");
        } else {
          assert.equal(server.requests.length, asked, "the model is asked once the message is committed");
        }
      } finally {
        await db.exec(`DROP TRIGGER refuse_${suffix} ON messages; DROP FUNCTION refuse_${suffix}();`);
      }
      server.setBehaviour({ chunks: ["fine"] });
      assert.equal((await chat(apiKey, { thread_id: threadId, message: "again", streaming: true })).status, 200, "no lock is left behind");
    });
  },
  { env: { PROVIDER_TIMEOUT_MS: "1000" } },
);
