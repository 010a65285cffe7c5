import assert from "node:assert/strict";
import { test } from "node:test";
import { acmeAgent } from "../support/fixtures.js";
import { forEachDatabase, type Harness } from "../support/harness.js";
import { pollUntil } from "../support/polling.js";

interface ListedThread {
  id: string;
  alias: string | null;
  type: string;
  project_name: string | null;
  created_at: string;
  usage: { billable_messages: number; voice_minutes: number };
  first_user_message: string | null;
  last_activity_at: string;
  message_count: number;
  call_count: number;
}

interface Page {
  threads: ListedThread[];
  pagination: { cursor: string | null };
}

function list(h: Harness, apiKey: string, query = "") {
  return h.request({ method: "GET", url: `/threads${query}`, headers: { authorization: apiKey } });
}

async function walk(h: Harness, apiKey: string, query: string): Promise<string[]> {
  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const response = await list(h, apiKey, `?${query}${cursor ? `&cursor=${cursor}` : ""}`);
    assert.equal(response.status, 200, response.body);
    const page: Page = response.json<Page>();
    seen.push(...page.threads.map((thread) => thread.id));
    cursor = page.pagination.cursor;
  } while (cursor);
  return seen;
}

forEachDatabase("listing threads", (h) => {
  test("threads are listed newest first and the cursor walks each one exactly once, also while new ones arrive", async () => {
    const { apiKey } = await h().organization({ agent: acmeAgent, pricing: { message_usd: 0.002 } });
    const created: string[] = [];
    for (let index = 0; index < 7; index++) created.push(await h().thread(apiKey, { alias: `t${index}` }));
    const everything = (await list(h(), apiKey, "?limit=100")).json<Page>();
    assert.deepEqual(everything.threads.map((thread) => thread.id), [...created].reverse());
    assert.deepEqual(Object.keys(everything.threads[0]!).sort(), [
      "alias", "call_count", "created_at", "first_user_message", "id", "last_activity_at", "message_count", "project_name", "timezone", "type", "usage",
    ]);
    assert.equal((await list(h(), apiKey)).json<Page>().threads.length, 7, "the default limit is 20");

    const first = (await list(h(), apiKey, "?limit=3")).json<Page>();
    assert.deepEqual(first.threads.map((thread) => thread.alias), ["t6", "t5", "t4"]);
    // A thread created mid-walk is newer than the cursor: the walk neither repeats nor skips the older ones.
    await h().thread(apiKey, { alias: "late" });
    const rest: string[] = [];
    let cursor = first.pagination.cursor;
    while (cursor) {
      const page: Page = (await list(h(), apiKey, `?limit=3&cursor=${cursor}`)).json<Page>();
      rest.push(...page.threads.map((thread) => thread.id));
      cursor = page.pagination.cursor;
    }
    assert.deepEqual([...first.threads.map((thread) => thread.id), ...rest], [...created].reverse());
    assert.deepEqual(await walk(h(), apiKey, "limit=1"), (await list(h(), apiKey, "?limit=100")).json<Page>().threads.map((thread) => thread.id));
  });

  test("threads that share a creation instant are each listed once", async () => {
    const { apiKey, organizationId } = await h().organization();
    const ids = Array.from({ length: 5 }, (_, index) => `tie-${organizationId}-${index}`);
    await h().database.db.query(
      `INSERT INTO threads (id, organization_id, type, timezone, created_at)
       SELECT id, $1, 'NORMAL', 'UTC', '2026-01-01T00:00:00.123456Z' FROM unnest($2::text[]) AS id`,
      [organizationId, ids],
    );
    assert.deepEqual(await walk(h(), apiKey, "limit=2"), [...ids].reverse());
  });

  test("the type and project filters narrow the list, and usage is shown", async () => {
    const { apiKey } = await h().organization({ agent: acmeAgent, pricing: { message_usd: 0.002 } });
    const inSupport = await h().thread(apiKey, { project_name: "support" });
    const chattedInSupport = await h().thread(apiKey);
    const simulation = await h().thread(apiKey, { type: "SIMULATION" });
    const chat = await h().request({
      method: "POST",
      url: "/chat",
      headers: { authorization: apiKey },
      payload: { thread_id: chattedInSupport, message: "What are your opening hours?", service_config_name: "support" },
    });
    assert.equal(chat.status, 200, chat.body);

    const bySupport = (await list(h(), apiKey, "?project_name=support")).json<Page>();
    assert.deepEqual(bySupport.threads.map((thread) => thread.id), [chattedInSupport, inSupport]);
    assert.equal(bySupport.threads[1]!.project_name, "support");
    assert.equal(bySupport.threads[0]!.usage.billable_messages, 1);
    assert.deepEqual((await list(h(), apiKey, "?project_name=other")).json<Page>().threads, []);
    assert.deepEqual((await list(h(), apiKey, "?type=SIMULATION")).json<Page>().threads.map((thread) => thread.id), [simulation]);
    assert.deepEqual((await list(h(), apiKey, "?type=NORMAL&project_name=support&limit=1")).json<Page>().threads.map((thread) => thread.id), [chattedInSupport]);
  });

  test("each thread is shown by what a person recognizes: its first user words, its last activity, its message and call counts", async () => {
    const { apiKey, projectId } = await h().organization({
      agent: acmeAgent,
      voice: {
        accounts: [{ id: "6f1f6c43-3b8f-4d9e-9a57-2f0c4f1b7a01", phone_numbers: ["+14155550100"] }],
        simulated: { script: ["Hello?", "Bye."], ring_ms: 10, turn_ms: 10 },
      },
    });
    const quiet = await h().thread(apiKey, { alias: "quiet" });
    const chatted = await h().thread(apiKey);
    const long = `What are your opening hours? ${"Please tell me. ".repeat(30)}`;
    for (const message of [long, "And where is the office?"]) {
      const chat = await h().request({ method: "POST", url: "/chat", headers: { authorization: apiKey }, payload: { thread_id: chatted, message, service_config_name: "support" } });
      assert.equal(chat.status, 200, chat.body);
    }
    const called = await h().thread(apiKey);
    const placed = await h().request({ method: "POST", url: `/voice/${called}/phone-call`, headers: { authorization: apiKey }, payload: { callee: "+14155552671", project_id: projectId } });
    assert.equal(placed.status, 200, placed.body);
    const callId = placed.json<{ id: string }>().id;
    const ended = await pollUntil(
      async () => (await h().request({ method: "GET", url: `/calls/${callId}`, headers: { authorization: apiKey } })).json<{ status: string; end_timestamp: number | null }>(),
      (call) => call.status === "ended",
      { what: "the call to end", timeoutMs: 20_000 },
    );

    const listed = new Map((await list(h(), apiKey)).json<Page>().threads.map((thread) => [thread.id, thread]));
    const history = async (threadId: string) =>
      (await h().request({ method: "GET", url: `/threads/${threadId}/messages?limit=100`, headers: { authorization: apiKey } })).json<{ messages: { role: string; timestamp: number }[] }>().messages;

    const none = listed.get(quiet)!;
    assert.deepEqual([none.first_user_message, none.message_count, none.call_count, none.last_activity_at], [null, 0, 0, none.created_at]);

    const chat = listed.get(chatted)!;
    const chatHistory = await history(chatted);
    assert.equal(chat.first_user_message, long.slice(0, 200));
    assert.equal(chat.message_count, chatHistory.length);
    assert.equal(chat.message_count, 4);
    assert.equal(chat.call_count, 0);
    assert.equal(Date.parse(chat.last_activity_at), Math.max(...chatHistory.map((message) => message.timestamp)));

    const call = listed.get(called)!;
    const callHistory = await history(called);
    assert.equal(call.call_count, 1);
    assert.equal(call.message_count, callHistory.length);
    assert.ok(call.message_count > 0, "the spoken turns are messages of the thread");
    assert.equal(call.first_user_message, "Hello?");
    assert.ok(call.usage.voice_minutes > 0);
    assert.ok(ended.end_timestamp && Date.parse(call.last_activity_at) >= ended.end_timestamp, `${call.last_activity_at} is the call end ${ended.end_timestamp}`);
  });

  test("another organization's threads are never listed", async () => {
    const mine = await h().organization();
    const theirs = await h().organization();
    const threadId = await h().thread(mine.apiKey);
    await h().thread(theirs.apiKey);
    await h().thread(theirs.apiKey);
    assert.deepEqual((await list(h(), mine.apiKey)).json<Page>().threads.map((thread) => thread.id), [threadId]);
    // A cursor taken from another organization's list only positions the walk: their older thread stays hidden.
    const theirCursor = (await list(h(), theirs.apiKey, "?limit=1")).json<Page>().pagination.cursor;
    assert.ok(theirCursor);
    assert.deepEqual((await list(h(), mine.apiKey, `?cursor=${theirCursor}`)).json<Page>().threads.map((thread) => thread.id), [threadId]);
  });

  test("a thread token cannot list threads, and bad queries get FastAPI's 422 bodies", async () => {
    const { apiKey } = await h().organization();
    const threadId = await h().thread(apiKey);
    const token = (await h().request({ method: "POST", url: `/threads/${threadId}/token`, headers: { authorization: apiKey } })).json<{ access_token: string }>();
    assert.equal((await list(h(), token.access_token)).status, 403);
    const missing = await h().request({ method: "GET", url: "/threads" });
    assert.deepEqual(missing.json(), { detail: [{ type: "missing", loc: ["header", "authorization"], msg: "Field required", input: null }] });

    const tooBig = await list(h(), apiKey, "?limit=101");
    assert.equal(tooBig.status, 422);
    assert.deepEqual(tooBig.json(), {
      detail: [{ type: "less_than_equal", loc: ["query", "limit"], msg: "Input should be less than or equal to 100", input: "101", ctx: { le: 100 } }],
    });
    assert.deepEqual((await list(h(), apiKey, "?limit=0")).json(), {
      detail: [{ type: "greater_than_equal", loc: ["query", "limit"], msg: "Input should be greater than or equal to 1", input: "0", ctx: { ge: 1 } }],
    });
    assert.deepEqual((await list(h(), apiKey, "?type=OTHER")).json(), {
      detail: [{ type: "literal_error", loc: ["query", "type"], msg: "Input should be 'NORMAL' or 'SIMULATION'", input: "OTHER", ctx: { expected: "'NORMAL' or 'SIMULATION'" } }],
    });
    const historyCursor = Buffer.from(JSON.stringify({ k: "h", t: threadId, p: 1 })).toString("base64url");
    const impossibleDate = Buffer.from(JSON.stringify({ k: "t", c: "2026-02-30T00:00:00.000000Z", i: "x" })).toString("base64url");
    for (const cursor of ["not base64!", "bm90IGpzb24", historyCursor, impossibleDate]) {
      const response = await list(h(), apiKey, `?cursor=${encodeURIComponent(cursor)}`);
      assert.equal(response.status, 422, cursor);
      assert.deepEqual(response.json(), {
        detail: [{ type: "value_error", loc: ["query", "cursor"], msg: "Value error, Invalid cursor", input: cursor, ctx: { error: {} } }],
      });
    }
  });

  test("GET /threads is in the OpenAPI document", async () => {
    const document = (await h().request({ method: "GET", url: "/openapi.json" })).json<{ paths: Record<string, Record<string, { parameters: { name: string }[] }>> }>();
    const operation = document.paths["/threads"]?.["get"];
    assert.ok(operation);
    assert.deepEqual(operation.parameters.map((parameter) => parameter.name).sort(), ["authorization", "cursor", "limit", "project_name", "type"]);
  });
});
