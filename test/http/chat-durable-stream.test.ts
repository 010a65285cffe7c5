import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { test } from "node:test";
import { cacheChannel, changeTags } from "../../src/domain/cache/invalidation.js";
import { ConversationRecall } from "../../src/domain/chat/conversation-recall.js";
import { threadEventsChannel } from "../../src/domain/events/events-repository.js";
import { forEachDatabase, injector } from "../support/harness.js";
import { fakeOpenAiForSuite } from "../support/fake-llm-servers.js";
import { eventually } from "../support/polling.js";
import { streamChat as streamChatAt } from "../support/streamed-chat.js";
import { TestSocket } from "../voice-calls/support.js";

const tokensOf = (body: string) =>
  body
    .trim()
    .split("\n")
    .map((line) => (JSON.parse(line) as { token?: string }).token ?? "")
    .join("");

/** The user's and assistant's texts the model was sent, the system prompt left out. */
const conversationSent = (json: unknown) => (json as { messages: { role: string; content: string }[] }).messages.filter((message) => message.role !== "system").map((message) => `${message.role}: ${message.content}`);

/**
 * A streamed turn asks the model while the user's message commits: what the model says reaches the client only once
 * that message is durable. The commit is held by a lock the test keeps, while the model answers in full. On a thread
 * whose last turn this instance served, the model is asked with the history the instance expects while the turn's
 * statement runs, and no token goes through before that statement has read the very same history: the statement is
 * held by a row lock the test keeps.
 */
forEachDatabase(
  "POST /chat streams no token before the user's message is durable",
  (h) => {
    const openai = fakeOpenAiForSuite();

    /** This instance's count of guessed histories with this outcome, from /metrics. */
    const guesses = async (outcome: "confirmed" | "wrong") => {
      const metrics = (await h().request({ method: "GET", url: "/metrics" })).body;
      const found = new RegExp(`^parley_chat_history_guesses_total\\{outcome="${outcome}"\\} (\\d+)$`, "m").exec(metrics);
      assert.ok(found, `parley_chat_history_guesses_total{outcome="${outcome}"} is in /metrics`);
      return Number(found[1]);
    };
    /** A thread of a new organization whose agent is the fake model, after one streamed turn ("first question", "first answer"). */
    const threadAfterOneTurn = async () => {
      const { apiKey } = await h().organization({ agent: { provider: "openai", model: "test-model", base_url: openai().url, api_key: "vendor-key" } });
      const threadId = await h().thread(apiKey);
      openai().setBehaviour({ chunks: ["first answer"] });
      assert.equal(tokensOf(await streamChat(apiKey, threadId, "first question").done), "first answer");
      return { apiKey, threadId };
    };
    /** The texts of the thread's latest messages, oldest first. */
    const storedTexts = async (apiKey: string, threadId: string) =>
      ((await h().request({ method: "GET", url: `/threads/${threadId}/messages`, headers: { authorization: apiKey } })).json() as { messages: { message: string }[] }).messages.map((stored) => stored.message);
    const streamChat = (apiKey: string, threadId: string, message: string) => streamChatAt(h().wsBase.replace(/^ws/, "http"), apiKey, threadId, message);

    test("the model answers while the commit is held: its tokens wait for the commit, then all arrive once", async () => {
      const { apiKey } = await h().organization({ agent: { provider: "openai", model: "test-model", base_url: openai().url, api_key: "vendor-key" } });
      const threadId = await h().thread(apiKey);
      openai().setBehaviour({ chunks: ["ok"] });
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
        openai().setBehaviour({ chunks: ["one ", "two ", "three"] });
        const asked = openai().requests.length;
        let streamed: ReturnType<typeof streamChat> | undefined;
        // The test's transaction holds the lock the commit's trigger waits for.
        await db.transaction(async (tx) => {
          await tx.query("SELECT pg_advisory_xact_lock($1)", [lockKey]);
          streamed = streamChat(apiKey, threadId, held);
          await eventually(() => openai().requests.length === asked + 1 && openai().requests.at(-1)!.chunksSent === 3, { what: "the model's whole answer", timeoutMs: 5_000, intervalMs: 10 });
          // Time for a token wrongly let through to reach the client.
          await new Promise((resolve) => setTimeout(resolve, 100));
          assert.doesNotMatch(streamed.received(), /"token"/, "no token before the user's message is durable");
        });
        const body = await streamed!.done;
        const lines = body.trim().split("\n").map((line) => JSON.parse(line) as { token?: string; message?: string });
        assert.equal(lines.map((line) => line.token ?? "").join(""), "one two three");
        assert.equal(openai().requests.length, asked + 1, "the model was asked once");
      } finally {
        await db.exec(`DROP TRIGGER hold_${suffix} ON messages; DROP FUNCTION hold_${suffix}();`);
      }
    });

    test("the model is asked while the statement waits, with the history it then reads, and its tokens wait for it", async () => {
      const { apiKey, threadId } = await threadAfterOneTurn();

      openai().setBehaviour({ chunks: ["one ", "two ", "three"] });
      const asked = openai().requests.length;
      const confirmedBefore = await guesses("confirmed");
      let streamed: ReturnType<typeof streamChat> | undefined;
      await h().database.db.transaction(async (tx) => {
        // The turn's statement starts by updating the thread's row: it waits for this transaction.
        await tx.query("SELECT id FROM threads WHERE id = $1 FOR UPDATE", [threadId]);
        streamed = streamChat(apiKey, threadId, "second question");
        await eventually(() => openai().requests.length === asked + 1 && openai().requests.at(-1)!.chunksSent === 3, { what: "the model's whole answer", timeoutMs: 5_000, intervalMs: 10 });
        assert.deepEqual(conversationSent(openai().requests.at(-1)!.json), ["user: first question", "assistant: first answer", "user: second question"]);
        const [stored] = await tx.query<{ count: string }>("SELECT count(*) FROM messages WHERE thread_id = $1", [threadId]);
        assert.equal(Number(stored!.count), 2, "the model was asked before the user's message was stored");
        await new Promise((resolve) => setTimeout(resolve, 100));
        assert.doesNotMatch(streamed.received(), /"token"/, "no token before the statement has run");
      });
      assert.equal(tokensOf(await streamed!.done), "one two three");
      assert.equal(openai().requests.length, asked + 1, "the model was asked once");
      assert.equal(await guesses("confirmed"), confirmedBefore + 1);
      assert.deepEqual(await storedTexts(apiKey, threadId), ["first question", "first answer", "second question", "one two three"]);
    });

    test("a guess the statement contradicts is dropped unseen: the model is asked again with the history read", async () => {
      const { apiKey, threadId } = await threadAfterOneTurn();
      // A writer this instance does not hear (its triggers off, as a replica's apply would run): the stored answer changes.
      await h().database.db.transaction(async (tx) => {
        await tx.query("SET LOCAL session_replication_role = replica");
        await tx.query("UPDATE messages SET content = 'corrected answer' WHERE thread_id = $1 AND role = 'assistant'", [threadId]);
      });
      openai().setBehaviour((request) => ({ chunks: conversationSent(request.json).includes("assistant: first answer") ? ["from the guess"] : ["from the history read"] }));
      const asked = openai().requests.length;
      const wrongBefore = await guesses("wrong");
      const body = await streamChat(apiKey, threadId, "second question").done;
      assert.equal(tokensOf(body), "from the history read");
      assert.equal(openai().requests.length, asked + 2, "asked with the guess, then with the history read");
      assert.equal(await guesses("wrong"), wrongBefore + 1);
      assert.deepEqual(conversationSent(openai().requests.at(-1)!.json), ["user: first question", "assistant: corrected answer", "user: second question"]);
      assert.deepEqual(await storedTexts(apiKey, threadId), ["first question", "corrected answer", "second question", "from the history read"]);
    });

    test("another instance's turn on the thread, once heard, leaves nothing to guess: the model is asked once, with the history read", async () => {
      const { apiKey, threadId } = await threadAfterOneTurn();
      // This instance's listener hands each thread event to its events socket and to its recall alike: once the
      // socket has the other instance's reply, the recall has heard that turn too.
      const events = await TestSocket.open(`${h().wsBase}/threads/${threadId}/events`, { authorization: apiKey });
      const other = injector(await h().startApp({ ownPool: true }));
      openai().setBehaviour({ chunks: ["answered elsewhere"] });
      const elsewhere = await other({ method: "POST", url: "/chat", headers: { authorization: apiKey }, payload: { service_config_name: "support", thread_id: threadId, message: "asked elsewhere", streaming: true } });
      assert.equal(elsewhere.status, 200);
      await events.next((event) => JSON.stringify(event).includes("answered elsewhere"));
      events.close();

      openai().setBehaviour({ chunks: ["third answer"] });
      const [asked, confirmed, wrong] = [openai().requests.length, await guesses("confirmed"), await guesses("wrong")];
      assert.equal(tokensOf(await streamChat(apiKey, threadId, "third question").done), "third answer");
      assert.equal(openai().requests.length, asked + 1, "asked once");
      assert.deepEqual([await guesses("confirmed"), await guesses("wrong")], [confirmed, wrong], "no guess");
      assert.deepEqual(conversationSent(openai().requests.at(-1)!.json), [
        "user: first question",
        "assistant: first answer",
        "user: asked elsewhere",
        "assistant: answered elsewhere",
        "user: third question",
      ]);
    });

    test("a thread is forgotten when another writer's change is heard, and is recalled only for its organization", async () => {
      const recall = new ConversationRecall(h().database.db, 1024 * 1024);
      await recall.start();
      try {
        const [organizationId, threadId] = [randomUUID(), randomUUID()];
        const remembered = [{ role: "user" as const, content: "hello" }];
        const expected = [...remembered, { role: "assistant" as const, content: "hi" }, { role: "user" as const, content: "again" }];
        recall.remember(organizationId, threadId, remembered, "hi", 5);
        assert.deepEqual(recall.predict(organizationId, threadId, "again", false, 10), expected);
        assert.equal(recall.predict(randomUUID(), threadId, "again", false, 10), undefined, "another organization's caller");
        assert.deepEqual(recall.predict(organizationId, threadId, "again", false, 2), expected.slice(-2), "the history limit");
        assert.deepEqual(recall.predict(organizationId, randomUUID(), "new", true, 10), [{ role: "user", content: "new" }], "a new conversation");

        // Its own turn's events (numbers up to the one remembered) keep it; a later one is another writer's.
        await h().database.db.notify([{ channel: threadEventsChannel, payload: `${threadId} 5` }]);
        await h().database.db.notify([{ channel: threadEventsChannel, payload: `${threadId} 6` }]);
        await eventually(() => recall.predict(organizationId, threadId, "again", false, 10) === undefined, { what: "the thread forgotten", timeoutMs: 5_000 });

        recall.remember(organizationId, threadId, remembered, "hi", 7);
        await h().database.db.notify([{ channel: cacheChannel, payload: changeTags.thread(threadId) }]);
        await eventually(() => recall.predict(organizationId, threadId, "again", false, 10) === undefined, { what: "the thread forgotten by its tag", timeoutMs: 5_000 });
      } finally {
        await recall.stop();
      }
    });

    test("a history that moves on the one remembered keeps its messages; any other is remembered as read", () => {
      const recall = new ConversationRecall(h().database.db, 1024 * 1024);
      const [organizationId, threadId] = [randomUUID(), randomUUID()];
      const limit = 4;
      const said: { role: "user" | "assistant"; content: string }[] = [];
      for (let turn = 0; turn < 6; turn++) {
        const question = `question ${turn % 2}`;
        const predicted = recall.predict(organizationId, threadId, question, false, limit);
        said.push({ role: "user", content: question });
        // A turn's statement reads new objects of the same messages.
        const read = said.slice(-limit).map((message) => ({ ...message }));
        if (turn > 0) assert.deepEqual(predicted, read, `turn ${turn}`);
        recall.remember(organizationId, threadId, read, `answer ${turn}`, turn);
        said.push({ role: "assistant", content: `answer ${turn}` });
      }
      const elsewhere = [{ role: "user" as const, content: "written by another instance" }, { role: "assistant" as const, content: "its answer" }, { role: "user" as const, content: "question 5" }];
      recall.remember(organizationId, threadId, elsewhere, "answer 6", 7);
      assert.deepEqual(recall.predict(organizationId, threadId, "next", false, 10), [...elsewhere, { role: "assistant", content: "answer 6" }, { role: "user", content: "next" }]);
    });

    test("threads are kept within their memory, the least recently used dropped first", () => {
      const recall = new ConversationRecall(h().database.db, 2_000);
      const organizationId = randomUUID();
      const threads = [randomUUID(), randomUUID(), randomUUID()];
      const history = [{ role: "user" as const, content: "x".repeat(300) }];
      recall.remember(organizationId, threads[0]!, history, "a", 1);
      recall.remember(organizationId, threads[1]!, history, "b", 1);
      assert.notEqual(recall.predict(organizationId, threads[0]!, "?", false, 10), undefined);
      recall.remember(organizationId, threads[2]!, history, "c", 1);
      assert.notEqual(recall.predict(organizationId, threads[0]!, "?", false, 10), undefined, "used last: kept");
      assert.equal(recall.predict(organizationId, threads[1]!, "?", false, 10), undefined, "least recently used: dropped");
      assert.notEqual(recall.predict(organizationId, threads[2]!, "?", false, 10), undefined);
    });
  },
  { only: "postgres", listen: true },
);

forEachDatabase(
  "POST /chat with a guessed history whose statement fails",
  (h) => {
    const openai = fakeOpenAiForSuite();

    test("the turn fails as it would have without the guess, no token is sent, and the service goes on", async () => {
      const { apiKey } = await h().organization({ agent: { provider: "openai", model: "test-model", base_url: openai().url, api_key: "vendor-key" } });
      const threadId = await h().thread(apiKey);
      openai().setBehaviour({ chunks: ["first answer"] });
      const base = h().wsBase.replace(/^ws/, "http");
      assert.equal(tokensOf(await streamChatAt(base, apiKey, threadId, "first question").done), "first answer");
      // Removed behind the instance's back (triggers off, so nothing is announced): its setup and its conversation
      // are still in memory, and the next turn's statement finds no thread.
      await h().database.db.transaction(async (tx) => {
        await tx.query("SET LOCAL session_replication_role = replica");
        await tx.query("DELETE FROM threads WHERE id = $1", [threadId]);
      });
      // The process would die of one (Node's default): the guess's refusal must be handled even when it never started.
      const unhandled: unknown[] = [];
      const onUnhandled = (reason: unknown) => unhandled.push(reason);
      process.on("unhandledRejection", onUnhandled);
      try {
        const body = await streamChatAt(base, apiKey, threadId, "second question").done;
        assert.doesNotMatch(body, /"token"/);
        await new Promise((resolve) => setTimeout(resolve, 50));
      } finally {
        process.off("unhandledRejection", onUnhandled);
      }
      assert.deepEqual(unhandled, []);
      const other = await h().thread(apiKey);
      assert.equal(tokensOf(await streamChatAt(base, apiKey, other, "still there?").done), "first answer");
    });
  },
  { listen: true },
);
