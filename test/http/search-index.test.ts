import assert from "node:assert/strict";
import { test } from "node:test";
import pino from "pino";
import { uuidv7 } from "../../src/domain/shared/ids.js";
import { Notifier } from "../../src/store/notifier.js";
import { SearchIndexMerger } from "../../src/store/search-index-merger.js";
import { TurnsStore } from "../../src/store/turns-store.js";
import { forEachDatabase, type Harness } from "../support/harness.js";
import { afterNotified } from "../support/invalidations.js";
import { eventually } from "../support/polling.js";

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

/** Merges what is pending in the trigram index's pending list; returns the pages merged. */
function mergePending(h: Harness): Promise<number> {
  return new SearchIndexMerger(h.database.db, 60_000, pino({ level: "silent" })).merge();
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

// The app's own merger is held back (one run a minute), so that the test decides when the pending list is merged.
forEachDatabase(
  "search through the trigram index and its pending list (migration 014)",
  (h) => {
    test("a stored message is found from its commit, and the same once its pending entries are merged into the index", async () => {
      const { apiKey } = await h().organization();
      const threadId = await h().thread(apiKey);
      const ids = await store(h(), threadId, ["the first Wombat", "no match", "second wombat here", "nothing", "third WOMBAT"]);
      const wombats = [ids[4], ids[2], ids[0]];
      assert.deepEqual(await searchAll(h(), apiKey, threadId, "wombat"), wombats);

      assert.ok((await mergePending(h())) >= 1, "the turns' trigrams were in the pending list");
      assert.equal(await mergePending(h()), 0);
      assert.deepEqual(await searchAll(h(), apiKey, threadId, "wombat"), wombats);

      // Half merged, half pending: pages walk across both, newest first, each match once.
      const more = await store(h(), threadId, ["fourth wombat", "wombat five", "and a sixth WomBat"]);
      assert.deepEqual(await searchAll(h(), apiKey, threadId, "wombat"), [more[2], more[1], more[0], ...wombats]);
      assert.deepEqual(await searchAll(h(), apiKey, threadId, "%"), []);
    });

    test("an edited message (by hand) is found by its current text only, before and after the merge", async () => {
      const { apiKey } = await h().organization();
      const threadId = await h().thread(apiKey);
      const [id] = await store(h(), threadId, ["an otter"]);
      await mergePending(h());
      await h().database.db.query("UPDATE messages SET content = 'a platypus' WHERE id = $1", [id]);
      assert.deepEqual(await searchAll(h(), apiKey, threadId, "platypus"), [id]);
      assert.deepEqual(await searchAll(h(), apiKey, threadId, "otter"), []);
      await mergePending(h());
      assert.deepEqual(await searchAll(h(), apiKey, threadId, "platypus"), [id]);
      assert.deepEqual(await searchAll(h(), apiKey, threadId, "otter"), []);
    });

    test("Parley's message writer announces its message itself; an insert after it in its transaction fires the trigger", async () => {
      const { apiKey } = await h().organization();
      const [written, byHand] = [await h().thread(apiKey), await h().thread(apiKey)];
      for (const threadId of [written, byHand]) await h().database.db.query("INSERT INTO conversations (thread_id, conversation_id) VALUES ($1, 1)", [threadId]);
      // The writer as a call uses it (its caller announces nothing): each thread's change is announced once committed.
      await afterNotified(h().database.db, `thread:${written}`, () =>
        afterNotified(h().database.db, `thread:${byHand}`, () =>
          h().database.db.transaction(async (tx) => {
            await tx.query("SELECT parley_store_message($1, 1, 1, $2, 1, 'user', 'a call heard a kangaroo', '{}', '{}')", [written, uuidv7()]);
            await tx.query("INSERT INTO messages (id, thread_id, seq, conversation_id, role, content) VALUES ($1, $2, 1, 1, 'assistant', 'a kangaroo by hand')", [uuidv7(), byHand]);
          }),
        ),
      );
      assert.equal((await searchAll(h(), apiKey, written, "kangaroo")).length, 1);
      assert.equal((await searchAll(h(), apiKey, byHand, "kangaroo")).length, 1);
    });

    test("a bulk load by hand is searchable at once and after its merge", async () => {
      const { apiKey } = await h().organization();
      const threadId = await h().thread(apiKey);
      await h().database.db.query("INSERT INTO conversations (thread_id, conversation_id) VALUES ($1, 1)", [threadId]);
      await h().database.db.query(
        "INSERT INTO messages (id, thread_id, seq, conversation_id, role, content) SELECT $1 || '-' || g, $1, g, 1, 'user', CASE WHEN g % 500 = 0 THEN 'bulk ibex ' ELSE 'bulk ' END || g FROM generate_series(1, 2500) g",
        [threadId],
      );
      assert.equal((await searchAll(h(), apiKey, threadId, "ibex")).length, 5);
      assert.ok((await mergePending(h())) >= 1);
      assert.equal((await searchAll(h(), apiKey, threadId, "ibex")).length, 5);
    });
  },
  { env: { SEARCH_INDEX_INTERVAL_MS: "60000" } },
);

async function gauge(h: Harness, name: string): Promise<number> {
  const metrics = (await h.request({ method: "GET", url: "/metrics" })).body;
  const match = new RegExp(`^${name} ([0-9.e+]+)$`, "m").exec(metrics);
  assert.ok(match, `${name} is in /metrics`);
  return Number(match[1]);
}

forEachDatabase("the search index merger of a running app", (h) => {
  test("merges a chat's pending trigrams into the index within its interval; search finds the chat before and after", async () => {
    const { apiKey } = await h().organization();
    const threadId = await h().thread(apiKey);
    const chat = await h().request({ method: "POST", url: "/chat", headers: { authorization: apiKey }, payload: { thread_id: threadId, message: "Any news about the capybara?", service_config_name: "support" } });
    assert.equal(chat.status, 200, chat.body);
    const stored = Date.now();
    assert.equal((await searchAll(h(), apiKey, threadId, "capybara")).length, 1);
    // A merge that began after the chat's commit took what the chat left pending: nothing is left for another.
    await eventually(async () => (await gauge(h(), "parley_search_index_last_merge_timestamp_seconds")) * 1000 > stored, { timeoutMs: 20_000, what: "a merge after the chat" });
    assert.ok((await gauge(h(), "parley_search_index_merged_pages")) > 0);
    assert.equal(await mergePending(h()), 0);
    assert.equal((await searchAll(h(), apiKey, threadId, "capybara")).length, 1);
  });
});
