import assert from "node:assert/strict";
import { test } from "node:test";
import pino from "pino";
import { uuidv7 } from "../../src/domain/shared/ids.js";
import { Notifier } from "../../src/store/notifier.js";
import { SearchIndexer } from "../../src/store/search-indexer.js";
import { TurnsStore } from "../../src/store/turns-store.js";
import { forEachDatabase, type Harness } from "../support/harness.js";
import { afterNotified } from "../support/invalidations.js";

interface SearchPage {
  matches: { message_id: string; context: { message_id: string; message: string }[] }[];
  pagination: { cursor: string | null };
}

/** Stores `texts` as alternating user messages and replies through the turn statements. */
async function store(h: Harness, threadId: string, texts: string[]): Promise<string[]> {
  const notifier = new Notifier(h.database.db);
  const turns = new TurnsStore(h.database.db, notifier);
  const ids: string[] = [];
  let conversationId = 0;
  for (const [index, content] of texts.entries()) {
    const id = uuidv7();
    ids.push(id);
    if (index % 2 === 0) {
      ({ conversationId } = await turns.open({ threadId, projectId: null, startNewConversation: false, userMessage: { id, content, extras: {} }, historyLimit: 0 }, null));
    } else {
      await turns.close({ threadId, conversationId, reply: { id, content, extras: {} }, priceUsd: 0 }, null);
    }
  }
  await notifier.close();
  return ids;
}

async function where(h: Harness, threadId: string): Promise<{ queued: number; indexed: number }> {
  const [row] = await h.database.db.query<{ queued: number; indexed: number }>(
    `SELECT (SELECT count(*)::int FROM message_search_queue WHERE thread_id = $1) AS queued,
            (SELECT count(*)::int FROM message_search WHERE thread_id = $1) AS indexed`,
    [threadId],
  );
  return row!;
}

async function searchAll(h: Harness, apiKey: string, threadId: string, query: string): Promise<string[]> {
  const found: string[] = [];
  let cursor: string | null = null;
  do {
    const response = await h.request({
      method: "GET",
      url: `/threads/${threadId}/messages/search?query=${encodeURIComponent(query)}&limit=2&context=0${cursor ? `&cursor=${cursor}` : ""}`,
      headers: { authorization: apiKey },
    });
    assert.equal(response.status, 200, response.body);
    const page: SearchPage = response.json<SearchPage>();
    found.push(...page.matches.map((match) => match.message_id));
    cursor = page.pagination.cursor;
  } while (cursor);
  return found;
}

// The app's own indexer is held back (one run a minute), so that the test decides when messages move to the index.
forEachDatabase(
  "search while the trigram index catches up (migration 007)",
  (h) => {
    test("a stored message is found at once from the queue, and exactly once after it moved into the index", async () => {
      const { apiKey } = await h().organization();
      const threadId = await h().thread(apiKey);
      const ids = await store(h(), threadId, ["the first Wombat", "no match", "second wombat here", "nothing", "third WOMBAT"]);
      assert.deepEqual(await where(h(), threadId), { queued: 5, indexed: 0 });
      const wombats = [ids[4], ids[2], ids[0]];
      assert.deepEqual(await searchAll(h(), apiKey, threadId, "wombat"), wombats);

      const indexer = new SearchIndexer(h().database.db, 60_000, pino({ level: "silent" }));
      assert.ok((await indexer.drain()) >= 5);
      assert.deepEqual(await where(h(), threadId), { queued: 0, indexed: 5 });
      assert.deepEqual(await searchAll(h(), apiKey, threadId, "wombat"), wombats);

      // Half indexed, half queued: pages walk across both, newest first, each match once.
      const more = await store(h(), threadId, ["fourth wombat", "wombat five", "and a sixth WomBat"]);
      assert.deepEqual(await where(h(), threadId), { queued: 3, indexed: 5 });
      assert.deepEqual(await searchAll(h(), apiKey, threadId, "wombat"), [more[2], more[1], more[0], ...wombats]);
      assert.deepEqual(await searchAll(h(), apiKey, threadId, "%"), []);
    });

    test("a message queued twice (an edited text) is indexed once, with its current text", async () => {
      const { apiKey } = await h().organization();
      const threadId = await h().thread(apiKey);
      const [id] = await store(h(), threadId, ["an otter"]);
      await h().database.db.query("UPDATE messages SET content = 'a platypus' WHERE id = $1", [id]);
      assert.deepEqual(await where(h(), threadId), { queued: 2, indexed: 0 });
      await new SearchIndexer(h().database.db, 60_000, pino({ level: "silent" })).drain();
      assert.deepEqual(await where(h(), threadId), { queued: 0, indexed: 1 });
      assert.deepEqual(await searchAll(h(), apiKey, threadId, "platypus"), [id]);
      assert.deepEqual(await searchAll(h(), apiKey, threadId, "otter"), []);
    });

    test("Parley's message writer queues and announces its message itself; an insert after it in its transaction fires the trigger", async () => {
      const { apiKey } = await h().organization();
      const threadId = await h().thread(apiKey);
      await h().database.db.query("INSERT INTO conversations (thread_id, conversation_id) VALUES ($1, 1)", [threadId]);
      // The writer as a call uses it (no announcement by the caller): the thread's change is announced once committed.
      await afterNotified(h().database.db, `thread:${threadId}`, () =>
        h().database.db.transaction(async (tx) => {
          await tx.query("SELECT parley_store_message($1, 1, 1, $2, 1, 'user', 'a call heard a kangaroo', '{}', '{}')", [threadId, uuidv7()]);
          await tx.query("INSERT INTO messages (id, thread_id, seq, conversation_id, role, content) VALUES ($1, $2, 2, 1, 'assistant', 'a kangaroo by hand')", [uuidv7(), threadId]);
        }),
      );
      assert.deepEqual(await where(h(), threadId), { queued: 2, indexed: 0 });
      assert.equal((await searchAll(h(), apiKey, threadId, "kangaroo")).length, 2);
      await new SearchIndexer(h().database.db, 60_000, pino({ level: "silent" })).drain();
      assert.deepEqual(await where(h(), threadId), { queued: 0, indexed: 2 });
    });

    test("an indexer's explicit drain moves every batch, also once the indexer is stopped", async () => {
      const { apiKey } = await h().organization();
      const threadId = await h().thread(apiKey);
      await h().database.db.query("INSERT INTO conversations (thread_id, conversation_id) VALUES ($1, 1)", [threadId]);
      await h().database.db.query(
        "INSERT INTO messages (id, thread_id, seq, conversation_id, role, content) SELECT $1 || '-' || g, $1, g, 1, 'user', 'bulk ' || g FROM generate_series(1, 2500) g",
        [threadId],
      );
      const indexer = new SearchIndexer(h().database.db, 60_000, pino({ level: "silent" }));
      indexer.start();
      await indexer.stop();
      assert.ok((await indexer.drain()) >= 2500);
      assert.deepEqual(await where(h(), threadId), { queued: 0, indexed: 2500 });
    });
  },
  { SEARCH_INDEX_INTERVAL_MS: "60000" },
);

forEachDatabase("the search indexer of a running app", (h) => {
  test("moves a chat's messages into the index within its interval, and search finds them before and after", async () => {
    const { apiKey } = await h().organization();
    const threadId = await h().thread(apiKey);
    const chat = await h().request({ method: "POST", url: "/chat", headers: { authorization: apiKey }, payload: { thread_id: threadId, message: "Any news about the capybara?", service_config_name: "support" } });
    assert.equal(chat.status, 200, chat.body);
    assert.equal((await searchAll(h(), apiKey, threadId, "capybara")).length, 1);
    const deadline = Date.now() + 20_000;
    while ((await where(h(), threadId)).indexed < 2) {
      assert.ok(Date.now() < deadline, "the running app's indexer did not index the chat's messages");
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    assert.equal((await where(h(), threadId)).queued, 0);
    assert.equal((await searchAll(h(), apiKey, threadId, "capybara")).length, 1);
  });
});
