import assert from "node:assert/strict";
import { test } from "node:test";
import { uuidv7 } from "../../src/domain/shared/ids.js";
import { changeTags } from "../../src/domain/cache/invalidation.js";
import { ConversationsStore } from "../../src/store/conversations-store.js";
import { Notifier } from "../../src/store/notifier.js";
import { TurnsStore } from "../../src/store/turns-store.js";
import { forEachDatabase, type Harness } from "../support/harness.js";
import { afterNotified } from "../support/invalidations.js";

interface Page {
  messages: { message_id: string; message: string; timestamp: number; role: string }[];
  pagination: { cursor: string | null };
  is_locked: boolean;
}

/** Seeds `count` messages through the turn statements, all with one timestamp so that ordering cannot lean on time. */
async function seed(h: Harness, threadId: string, count: number, text: (i: number) => string = (i) => `message ${i}`): Promise<string[]> {
  const db = h.database.db;
  const notifier = new Notifier(db);
  const turns = new TurnsStore(db, notifier);
  const ids: string[] = [];
  let conversationId = 0;
  for (let i = 0; i < count; i += 1) {
    const id = uuidv7();
    ids.push(id);
    if (i % 2 === 0) {
      const userMessage = { id, content: text(i), extras: {} };
      ({ conversationId } = await turns.open({ threadId, projectId: null, startNewConversation: false, userMessage, historyLimit: 0 }, null));
    } else {
      await turns.close({ threadId, conversationId, reply: { id, content: text(i), extras: {} }, priceUsd: 0 }, null);
    }
  }
  await notifier.close();
  await db.query("UPDATE messages SET created_at = '2026-01-01T00:00:00Z' WHERE thread_id = $1", [threadId]);
  return ids;
}

async function page(h: Harness, apiKey: string, threadId: string, query: string): Promise<Page> {
  const response = await h.request({ method: "GET", url: `/threads/${threadId}/messages?${query}`, headers: { authorization: apiKey } });
  assert.equal(response.status, 200, response.body);
  return response.json<Page>();
}

forEachDatabase("message history pagination", (h) => {
  test("without a cursor the latest 20 come oldest first, and an empty thread has an empty page", async () => {
    const { apiKey } = await h().organization();
    const empty = await h().thread(apiKey);
    assert.deepEqual(await page(h(), apiKey, empty, ""), { messages: [], pagination: { cursor: null }, is_locked: false });
    const threadId = await h().thread(apiKey);
    const ids = await seed(h(), threadId, 25);
    const latest = await page(h(), apiKey, threadId, "");
    assert.deepEqual(latest.messages.map((m) => m.message_id), ids.slice(5));
    assert.notEqual(latest.pagination.cursor, null);
    assert.equal(latest.messages[0]!.timestamp, Date.parse("2026-01-01T00:00:00Z"));
  });

  test("walking older then newer visits every message exactly once with tied timestamps, also while messages arrive", async () => {
    const { apiKey } = await h().organization();
    const threadId = await h().thread(apiKey);
    const ids = await seed(h(), threadId, 53);
    const seenOlder: string[] = [];
    const cursors: string[] = [];
    let current = await page(h(), apiKey, threadId, "limit=7");
    seenOlder.unshift(...current.messages.map((m) => m.message_id));
    let arrived = 0;
    while (current.pagination.cursor) {
      cursors.push(current.pagination.cursor);
      await chatOnce(h(), apiKey, threadId, `arrival ${arrived++}`);
      current = await page(h(), apiKey, threadId, `limit=7&cursor=${current.pagination.cursor}`);
      seenOlder.unshift(...current.messages.map((m) => m.message_id));
    }
    assert.deepEqual(seenOlder, ids);

    const seenNewer: string[] = [];
    let cursor: string | null = cursors.at(-1)!;
    const oldestPage = current.messages.map((m) => m.message_id);
    while (cursor) {
      const next: Page = await page(h(), apiKey, threadId, `limit=7&newer=true&cursor=${cursor}`);
      seenNewer.push(...next.messages.map((m) => m.message_id));
      if (arrived < 8) await chatOnce(h(), apiKey, threadId, `arrival ${arrived++}`);
      cursor = next.pagination.cursor;
    }
    const all = [...oldestPage, ...seenNewer];
    assert.equal(new Set(all).size, all.length, "no message repeated");
    const stored = await h().database.db.query<{ id: string }>("SELECT id FROM messages WHERE thread_id = $1 ORDER BY seq", [threadId]);
    assert.deepEqual(all, stored.map((row) => row.id), "no message skipped, newest included");
  });

  test("a cursor can be walked back the other way", async () => {
    const { apiKey } = await h().organization();
    const threadId = await h().thread(apiKey);
    const ids = await seed(h(), threadId, 30);
    const latest = await page(h(), apiKey, threadId, "limit=10");
    const back = await page(h(), apiKey, threadId, `limit=10&newer=true&cursor=${latest.pagination.cursor}`);
    assert.deepEqual(back.messages.map((m) => m.message_id), ids.slice(20));
    assert.equal(back.pagination.cursor, null);
  });

  test("bad, foreign and malformed cursors and limits are precise 422s", async () => {
    const { apiKey } = await h().organization();
    const threadId = await h().thread(apiKey);
    const other = await h().thread(apiKey);
    await seed(h(), other, 30);
    const foreignCursor = (await page(h(), apiKey, other, "limit=5")).pagination.cursor!;
    for (const cursor of ["%%%", "bm90IGpzb24", foreignCursor]) {
      const response = await h().request({ method: "GET", url: `/threads/${threadId}/messages?cursor=${encodeURIComponent(cursor)}`, headers: { authorization: apiKey } });
      assert.equal(response.status, 422);
      assert.deepEqual(response.json<{ detail: { loc: unknown[] }[] }>().detail[0]!.loc, ["query", "cursor"]);
    }
    const limit = await h().request({ method: "GET", url: `/threads/${threadId}/messages?limit=101&newer=maybe`, headers: { authorization: apiKey } });
    assert.deepEqual(limit.json(), {
      detail: [
        { type: "bool_parsing", loc: ["query", "newer"], msg: "Input should be a valid boolean, unable to interpret input", input: "maybe" },
        { type: "less_than_equal", loc: ["query", "limit"], msg: "Input should be less than or equal to 100", input: "101", ctx: { le: 100 } },
      ],
    });
  });

  test("is_locked follows lock_on_end and the end of the latest conversation", async () => {
    const { apiKey } = await h().organization({ conversation: { lock_on_end: true } });
    const threadId = await h().thread(apiKey, { project_name: "support" });
    await chatOnce(h(), apiKey, threadId, "hello");
    assert.equal((await page(h(), apiKey, threadId, "")).is_locked, false);
    await afterNotified(h().database.db, changeTags.thread(threadId), () => new ConversationsStore(h().database.db).endActive(threadId));
    assert.equal((await page(h(), apiKey, threadId, "")).is_locked, true);
    await chatOnce(h(), apiKey, threadId, "again");
    assert.equal((await page(h(), apiKey, threadId, "")).is_locked, false);
  });
});

forEachDatabase("message search", (h) => {
  test("matches are case-insensitive substrings, newest first, with context and cursors around them", async () => {
    const { apiKey } = await h().organization();
    const threadId = await h().thread(apiKey);
    const ids = await seed(h(), threadId, 40, (i) => (i % 10 === 3 ? `The Invoice number ${i}` : `small talk ${i} 100%_done`));
    const response = await h().request({ method: "GET", url: `/threads/${threadId}/messages/search?query=inVOICE&context=2&limit=3`, headers: { authorization: apiKey } });
    assert.equal(response.status, 200);
    const body = response.json<{ matches: { message_id: string; prev_cursor: string | null; next_cursor: string | null; context: { message_id: string }[] }[]; pagination: { cursor: string | null } }>();
    assert.deepEqual(body.matches.map((m) => m.message_id), [ids[33], ids[23], ids[13]]);
    assert.deepEqual(body.matches[0]!.context.map((m) => m.message_id), ids.slice(31, 36));
    const before = await page(h(), apiKey, threadId, `limit=3&cursor=${body.matches[0]!.prev_cursor}`);
    assert.deepEqual(before.messages.map((m) => m.message_id), ids.slice(28, 31));
    const afterwards = await page(h(), apiKey, threadId, `limit=3&newer=true&cursor=${body.matches[0]!.next_cursor}`);
    assert.deepEqual(afterwards.messages.map((m) => m.message_id), ids.slice(36, 39));
    const rest = await h().request({ method: "GET", url: `/threads/${threadId}/messages/search?query=invoice&limit=3&cursor=${body.pagination.cursor}`, headers: { authorization: apiKey } });
    const restBody = rest.json<{ matches: { message_id: string; prev_cursor: string | null }[]; pagination: { cursor: string | null } }>();
    assert.deepEqual(restBody.matches.map((m) => m.message_id), [ids[3]]);
    assert.equal(restBody.pagination.cursor, null);
    const literal = await h().request({ method: "GET", url: `/threads/${threadId}/messages/search?query=${encodeURIComponent("%_")}&limit=50`, headers: { authorization: apiKey } });
    assert.equal(literal.json<{ matches: unknown[] }>().matches.length, 36, "% and _ are matched literally");
  });

  test("a match at the thread's edges has null cursors, and bad parameters are 422s", async () => {
    const { apiKey } = await h().organization();
    const threadId = await h().thread(apiKey);
    await seed(h(), threadId, 3, (i) => `needle ${i}`);
    const all = (await h().request({ method: "GET", url: `/threads/${threadId}/messages/search?query=needle&context=5`, headers: { authorization: apiKey } })).json<{
      matches: { prev_cursor: string | null; next_cursor: string | null; context: unknown[] }[];
    }>();
    assert.equal(all.matches.length, 3);
    assert.ok(all.matches.every((m) => m.prev_cursor === null && m.next_cursor === null && m.context.length === 3));
    const bad = await h().request({ method: "GET", url: `/threads/${threadId}/messages/search?query=&context=11&limit=0`, headers: { authorization: apiKey } });
    assert.deepEqual(
      bad.json<{ detail: { type: string; loc: unknown[] }[] }>().detail.map((d) => [d.type, d.loc]),
      [
        ["string_too_short", ["query", "query"]],
        ["greater_than_equal", ["query", "limit"]],
        ["less_than_equal", ["query", "context"]],
      ],
    );
    const missing = await h().request({ method: "GET", url: `/threads/${threadId}/messages/search`, headers: { authorization: apiKey } });
    assert.deepEqual(missing.json(), { detail: [{ type: "missing", loc: ["query", "query"], msg: "Field required", input: null }] });
  });

  test("walking search pages visits every match exactly once while messages arrive", async () => {
    const { apiKey } = await h().organization();
    const threadId = await h().thread(apiKey);
    await seed(h(), threadId, 60, (i) => (i % 3 === 0 ? `match ${i}` : `other ${i}`));
    const expected = (await h().database.db.query<{ id: string }>("SELECT id FROM messages WHERE thread_id = $1 AND content LIKE 'match%' ORDER BY seq DESC", [threadId])).map((r) => r.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const query: string = `query=MATCH&limit=4${cursor ? `&cursor=${cursor}` : ""}`;
      const body = (await h().request({ method: "GET", url: `/threads/${threadId}/messages/search?${query}`, headers: { authorization: apiKey } })).json<{
        matches: { message_id: string }[];
        pagination: { cursor: string | null };
      }>();
      seen.push(...body.matches.map((m) => m.message_id));
      if (cursor) await seed(h(), threadId, 1, () => "match arriving late");
      cursor = body.pagination.cursor;
    } while (cursor);
    assert.deepEqual(seen, expected);
  });
});

async function chatOnce(h: Harness, apiKey: string, threadId: string, message: string): Promise<void> {
  const response = await h.request({ method: "POST", url: "/chat", headers: { authorization: apiKey }, payload: { thread_id: threadId, message, service_config_name: "support" } });
  assert.equal(response.status, 200, response.body);
}
