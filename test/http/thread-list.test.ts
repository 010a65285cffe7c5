import assert from "node:assert/strict";
import { test } from "node:test";
import { acmeAgent } from "../support/fixtures.js";
import { forEachDatabase, type Harness } from "../support/harness.js";

interface ListedThread {
  id: string;
  alias: string | null;
  type: string;
  project_name: string | null;
  created_at: string;
  usage: { billable_messages: number };
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
    assert.deepEqual(Object.keys(everything.threads[0]!).sort(), ["alias", "created_at", "id", "project_name", "timezone", "type", "usage"]);
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
