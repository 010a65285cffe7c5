import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { request as httpRequest } from "node:http";
import { after, before, test } from "node:test";
import { forEachDatabase } from "../support/harness.js";
import { startFakeOpenAi, type FakeLlmServer } from "../support/fake-llm-servers.js";
import { eventually } from "../support/polling.js";

/**
 * A streamed turn asks the model while the user's message commits: what the model says reaches the client only once
 * that message is durable. The commit is held by a lock the test keeps, while the model answers in full.
 */
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
        assert.equal(openai.requests.length, asked + 1, "the model was asked once");
      } finally {
        await db.exec(`DROP TRIGGER hold_${suffix} ON messages; DROP FUNCTION hold_${suffix}();`);
      }
    });
  },
  { only: "postgres", listen: true },
);
