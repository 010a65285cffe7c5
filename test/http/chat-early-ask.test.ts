import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { request as httpRequest } from "node:http";
import { after, before, test } from "node:test";
import { forEachDatabase } from "../support/harness.js";
import { startFakeOpenAi, type FakeLlmServer } from "../support/fake-llm-servers.js";
import { eventually } from "../support/polling.js";

/**
 * A streamed turn asks the model from the history this instance remembers, as its first statement is sent: what the
 * model says from it reaches the client only once the statement has shown that history to be the thread's, and the
 * user's message is durable.
 */
forEachDatabase(
  "POST /chat asking the model before the first statement's rows",
  (h) => {
    let openai: FakeLlmServer;
    before(async () => {
      openai = await startFakeOpenAi();
    });
    after(async () => {
      await openai.close();
    });

    async function setup(): Promise<{ apiKey: string; threadId: string }> {
      const { apiKey } = await h().organization({ agent: { provider: "openai", model: "test-model", base_url: openai.url, api_key: "vendor-key", system_prompt: "Be brief." } });
      return { apiKey, threadId: await h().thread(apiKey) };
    }

    function chat(apiKey: string, threadId: string, message: string) {
      return h().request({ method: "POST", url: "/chat", headers: { authorization: apiKey }, payload: { service_config_name: "support", thread_id: threadId, message, streaming: true } });
    }

    function tokens(body: string): string {
      return body
        .trim()
        .split("\n")
        .map((line) => (JSON.parse(line) as { token?: string }).token ?? "")
        .join("");
    }

    function promptOf(index: number): string[] {
      const json = openai.requests[index]!.json as { messages: { content: string }[] };
      return json.messages.slice(1).map((message) => message.content);
    }

    test("a message written behind the instance's back is in the prompt: the early call from the remembered history is dropped", async () => {
      const { apiKey, threadId } = await setup();
      // The reply tells which prompt it answers: how many messages it had.
      openai.setBehaviour((request) => ({ chunks: [`seen ${(request.json as { messages: unknown[] }).messages.length}`], firstChunkDelayMs: 20 }));
      assert.equal(tokens((await chat(apiKey, threadId, "first")).body), "seen 2");
      // Another writer's message, with no notification this instance could have heard.
      const behind = `written behind its back ${randomUUID()}`;
      await h().database.db.query(
        `WITH t AS (UPDATE threads SET last_message_seq = last_message_seq + 1 WHERE id = $1 RETURNING last_message_seq, active_conversation_id)
         INSERT INTO messages (id, thread_id, seq, conversation_id, role, content) SELECT $2, $1, t.last_message_seq, t.active_conversation_id, 'assistant', $3 FROM t`,
        [threadId, randomUUID(), behind],
      );
      const asked = openai.requests.length;
      const response = await chat(apiKey, threadId, "second");
      assert.equal(response.status, 200, response.body);
      assert.equal(tokens(response.body), "seen 5", "the reply is the one to the thread's true history");
      assert.deepEqual(promptOf(openai.requests.length - 1), ["first", "seen 2", behind, "second"]);
      // The early call may be aborted before the fake server has read it where the statement blocks the process (PGlite).
      if (h().database.name === "postgres") {
        assert.equal(openai.requests.length, asked + 2, "asked early from the remembered history, then again");
        assert.deepEqual(promptOf(asked), ["first", "seen 2", "second"]);
      }

      // The history is remembered again from the statement's: the next turn is asked once.
      const next = openai.requests.length;
      assert.equal(tokens((await chat(apiKey, threadId, "third")).body), "seen 7");
      assert.equal(openai.requests.length, next + 1);
      assert.deepEqual(promptOf(next), ["first", "seen 2", behind, "second", "seen 5", "third"]);
    });

    test("a commit that fails after an early call aborts it: no token is sent and the message is not kept", async () => {
      const { apiKey, threadId } = await setup();
      openai.setBehaviour({ chunks: ["ok"] });
      assert.equal((await chat(apiKey, threadId, "warm")).status, 200);
      const suffix = randomUUID().replaceAll("-", "");
      const refused = `refused at commit ${suffix}`;
      const db = h().database.db;
      await db.exec(`
        CREATE FUNCTION refuse_${suffix}() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN PERFORM pg_sleep(0.2); RAISE EXCEPTION 'refused at commit'; END $$;
        CREATE CONSTRAINT TRIGGER refuse_${suffix} AFTER INSERT ON messages DEFERRABLE INITIALLY DEFERRED
          FOR EACH ROW WHEN (NEW.content = '${refused}') EXECUTE FUNCTION refuse_${suffix}();`);
      try {
        openai.setBehaviour({ chunks: Array.from({ length: 20 }, (_, i) => `t${i} `), chunkDelayMs: 30 });
        const asked = openai.requests.length;
        const response = await chat(apiKey, threadId, refused);
        assert.equal(response.status, 500, response.body);
        assert.doesNotMatch(response.body, /"token"/);
        if (h().database.name === "postgres") {
          assert.equal(openai.requests.length, asked + 1, "the model was asked early, once");
          assert.ok(openai.requests.at(-1)!.chunksSent < 20, "the model call was aborted when the commit failed");
        }
      } finally {
        await db.exec(`DROP TRIGGER refuse_${suffix} ON messages; DROP FUNCTION refuse_${suffix}();`);
      }
      openai.setBehaviour({ chunks: ["fine"] });
      const again = await chat(apiKey, threadId, "again");
      assert.equal(again.status, 200, "no lock is left behind");
      assert.deepEqual(promptOf(openai.requests.length - 1), ["warm", "ok", "again"], "the refused message is in no later prompt");
    });
  },
  { env: { PROVIDER_TIMEOUT_MS: "2000" } },
);

forEachDatabase(
  "POST /chat streams no token before the user's message is durable",
  (h) => {
    let openai: FakeLlmServer;
    before(async () => {
      openai = await startFakeOpenAi();
    });
    after(async () => {
      await openai.close();
    });

    /** A streamed chat over a real connection: what the client has received so far, and the whole body once it ends. */
    function streamChat(apiKey: string, threadId: string, message: string): { received: () => string; done: Promise<string> } {
      let body = "";
      const url = new URL("/chat", h().wsBase.replace(/^ws/, "http"));
      const done = new Promise<string>((resolve, reject) => {
        const req = httpRequest(url, { method: "POST", headers: { authorization: apiKey, "content-type": "application/json" } }, (res) => {
          res.setEncoding("utf8");
          res.on("data", (chunk: string) => (body += chunk));
          res.on("end", () => resolve(body));
          res.on("error", reject);
        });
        req.on("error", reject);
        req.end(JSON.stringify({ service_config_name: "support", thread_id: threadId, message, streaming: true }));
      });
      return { received: () => body, done };
    }

    test("the model answers while the commit is held: its tokens wait for the commit, then all arrive once", async () => {
      const { apiKey } = await h().organization({ agent: { provider: "openai", model: "test-model", base_url: openai.url, api_key: "vendor-key" } });
      const threadId = await h().thread(apiKey);
      openai.setBehaviour({ chunks: ["ok"] });
      assert.match(await streamChat(apiKey, threadId, "warm").done, /"token"/);

      const suffix = randomUUID().replaceAll("-", "");
      const held = `held at commit ${suffix}`;
      const lockKey = Number.parseInt(suffix.slice(0, 7), 16);
      const db = h().database.db;
      await db.exec(`
        CREATE FUNCTION hold_${suffix}() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN PERFORM pg_advisory_xact_lock(${lockKey}); RETURN NULL; END $$;
        CREATE CONSTRAINT TRIGGER hold_${suffix} AFTER INSERT ON messages DEFERRABLE INITIALLY DEFERRED
          FOR EACH ROW WHEN (NEW.content = '${held}') EXECUTE FUNCTION hold_${suffix}();`);
      try {
        openai.setBehaviour({ chunks: ["one ", "two ", "three"] });
        const asked = openai.requests.length;
        let streamed: ReturnType<typeof streamChat> | undefined;
        // The test's transaction holds the lock the commit's trigger waits for.
        await db.transaction(async (tx) => {
          await tx.query("SELECT pg_advisory_xact_lock($1)", [lockKey]);
          streamed = streamChat(apiKey, threadId, held);
          await eventually(() => openai.requests.length === asked + 1 && openai.requests.at(-1)!.chunksSent === 3, { what: "the model's whole answer", timeoutMs: 5_000, intervalMs: 10 });
          // Time for a token wrongly let through to reach the client.
          await new Promise((resolve) => setTimeout(resolve, 100));
          assert.doesNotMatch(streamed.received(), /"token"/, "no token before the user's message is durable");
        });
        const body = await streamed!.done;
        const lines = body.trim().split("\n").map((line) => JSON.parse(line) as { token?: string; message?: string });
        assert.equal(lines.map((line) => line.token ?? "").join(""), "one two three");
        assert.equal(openai.requests.length, asked + 1, "the early call was kept");
      } finally {
        await db.exec(`DROP TRIGGER hold_${suffix} ON messages; DROP FUNCTION hold_${suffix}();`);
      }
    });
  },
  { only: "postgres", listen: true },
);
