import assert from "node:assert/strict";
import { test } from "node:test";
import { uuidv7 } from "../../src/domain/shared/ids.js";
import { changeTags } from "../../src/domain/cache/invalidation.js";
import { acmeAgent } from "../support/fixtures.js";
import { forEachDatabase, type Harness } from "../support/harness.js";
import { afterNotified } from "../support/invalidations.js";

interface Page {
  messages: { message_id: string; role: string; message: string; conversation_id: number; conversation_end_time: string | null }[];
  is_locked: boolean;
}

const lockingConfig = { agent: acmeAgent, conversation: { lock_on_end: true } };

/** Reads the latest page twice: the second read is served from the cache when the cache is on. */
async function cachedPage(h: Harness, credential: string, threadId: string): Promise<Page> {
  await pageOf(h, credential, threadId);
  return pageOf(h, credential, threadId);
}

async function pageOf(h: Harness, credential: string, threadId: string): Promise<Page> {
  const response = await h.request({ method: "GET", url: `/threads/${threadId}/messages`, headers: { authorization: credential } });
  assert.equal(response.status, 200, response.body);
  return response.json<Page>();
}

async function post(h: Harness, credential: string, url: string, payload: Record<string, unknown>): Promise<string> {
  const response = await h.request({ method: "POST", url, headers: { authorization: credential }, payload });
  assert.equal(response.status, 200, response.body);
  return response.body;
}

function declareSuite(title: string, overrides: Record<string, string>): void {
  forEachDatabase(
    title,
    (h) => {
      test("a chat's messages show on a cached page as soon as the chat answers, whole or streamed", async () => {
        const { apiKey } = await h().organization({ agent: acmeAgent });
        const threadId = await h().thread(apiKey);
        assert.deepEqual((await cachedPage(h(), apiKey, threadId)).messages, []);
        await post(h(), apiKey, "/chat", { thread_id: threadId, message: "What are your opening hours?", service_config_name: "support" });
        assert.deepEqual((await cachedPage(h(), apiKey, threadId)).messages.map((m) => m.role), ["user", "assistant"]);
        await post(h(), apiKey, "/chat", { thread_id: threadId, message: "And on Sunday?", service_config_name: "support", streaming: true });
        const page = await pageOf(h(), apiKey, threadId);
        assert.deepEqual(page.messages.map((m) => m.message).slice(2, 3), ["And on Sunday?"]);
        assert.equal(page.messages.length, 4);
      });

      test("a thread token reads the same fresh page as the API key", async () => {
        const { apiKey } = await h().organization({ agent: acmeAgent });
        const threadId = await h().thread(apiKey);
        const token = JSON.parse(await post(h(), apiKey, `/threads/${threadId}/token`, {})) as { access_token: string };
        await cachedPage(h(), token.access_token, threadId);
        await post(h(), token.access_token, "/chat", { thread_id: threadId, message: "hello", service_config_name: "support" });
        assert.equal((await pageOf(h(), token.access_token, threadId)).messages.length, 2);
        assert.equal((await pageOf(h(), apiKey, threadId)).messages.length, 2);
      });

      test("legacy chat, follow-up and end_conversation change cached pages before they answer", async () => {
        const { apiKey } = await h().organization(lockingConfig);
        const threadId = await h().thread(apiKey);
        await cachedPage(h(), apiKey, threadId);
        await post(h(), apiKey, "/legacy/chat", { thread_id: threadId, message: "hello", service_mode_name: "support" });
        assert.equal((await cachedPage(h(), apiKey, threadId)).messages.length, 2);
        await post(h(), apiKey, "/legacy/get_followup", { thread_id: threadId, service_mode_name: "support", streaming: true });
        assert.equal((await cachedPage(h(), apiKey, threadId)).messages.length, 3);
        await post(h(), apiKey, "/legacy/end_conversation", { thread_id: threadId });
        const ended = await cachedPage(h(), apiKey, threadId);
        assert.equal(ended.is_locked, true);
        assert.ok(ended.messages.every((m) => m.conversation_end_time !== null));
      });

      test("a message opening a new conversation unlocks a locked thread's cached page", async () => {
        const { apiKey } = await h().organization(lockingConfig);
        const threadId = await h().thread(apiKey);
        await post(h(), apiKey, "/chat", { thread_id: threadId, message: "hello", service_config_name: "support" });
        await post(h(), apiKey, "/legacy/end_conversation", { thread_id: threadId });
        assert.equal((await cachedPage(h(), apiKey, threadId)).is_locked, true);
        await post(h(), apiKey, "/chat", { thread_id: threadId, message: "again", service_config_name: "support", start_new_conversation: true });
        const page = await cachedPage(h(), apiKey, threadId);
        assert.equal(page.is_locked, false);
        assert.deepEqual([...new Set(page.messages.map((m) => m.conversation_id))], [1, 2]);
      });

      test("publishing a project configuration flips is_locked on the organization's cached pages", async () => {
        const { apiKey, projectId } = await h().organization({ agent: acmeAgent });
        const threadId = await h().thread(apiKey);
        await post(h(), apiKey, "/chat", { thread_id: threadId, message: "hello", service_config_name: "support" });
        await post(h(), apiKey, "/legacy/end_conversation", { thread_id: threadId });
        assert.equal((await cachedPage(h(), apiKey, threadId)).is_locked, false);
        assert.equal((await h().admin("PUT", `/admin/projects/${projectId}/config`, { config: lockingConfig })).status, 201);
        assert.equal((await cachedPage(h(), apiKey, threadId)).is_locked, true);
        assert.equal((await h().admin("PUT", `/admin/projects/${projectId}/config`, { config: { agent: acmeAgent } })).status, 201);
        assert.equal((await cachedPage(h(), apiKey, threadId)).is_locked, false);
      });

      test("a write made elsewhere (another instance, straight SQL) reaches a cached page through its notification", async () => {
        const { apiKey } = await h().organization({ agent: acmeAgent });
        const threadId = await h().thread(apiKey);
        await post(h(), apiKey, "/chat", { thread_id: threadId, message: "hello", service_config_name: "support" });
        assert.equal((await cachedPage(h(), apiKey, threadId)).messages.length, 2);
        const db = h().database.db;
        await afterNotified(db, changeTags.thread(threadId), () =>
          db.query(
            `WITH next AS (UPDATE threads SET last_message_seq = last_message_seq + 1 WHERE id = $2 RETURNING last_message_seq)
             INSERT INTO messages (id, thread_id, seq, conversation_id, role, content) SELECT $1, $2, last_message_seq, 1, 'user', 'from elsewhere' FROM next`,
            [uuidv7(), threadId],
          ),
        );
        assert.equal((await cachedPage(h(), apiKey, threadId)).messages.at(-1)?.message, "from elsewhere");
        await afterNotified(db, changeTags.thread(threadId), () =>
          db.query("UPDATE conversations SET ended_at = now() WHERE thread_id = $1", [threadId]),
        );
        assert.ok((await cachedPage(h(), apiKey, threadId)).messages.every((m) => m.conversation_end_time !== null));
      });

      test("a revoked API key is refused at once by the instance that had it cached", async () => {
        const { organizationId, apiKey } = await h().organization({ agent: acmeAgent });
        const threadId = await h().thread(apiKey);
        const key = (await h().admin("POST", `/admin/organizations/${organizationId}/api-keys`)).json<{ id: string; api_key: string }>();
        await cachedPage(h(), key.api_key, threadId);
        assert.equal((await h().admin("DELETE", `/admin/api-keys/${key.id}`)).status, 204);
        const refused = await h().request({ method: "GET", url: `/threads/${threadId}/messages`, headers: { authorization: key.api_key } });
        assert.equal(refused.status, 401);
        assert.deepEqual(refused.json(), { detail: "API key has been revoked" });
        assert.equal((await pageOf(h(), apiKey, threadId)).messages.length, 0, "the organization's other key still works");
      });

      test("a key revoked behind the instance's back (straight SQL) is refused once its notification arrives", async () => {
        const { organizationId, apiKey } = await h().organization({ agent: acmeAgent });
        const threadId = await h().thread(apiKey);
        const key = (await h().admin("POST", `/admin/organizations/${organizationId}/api-keys`)).json<{ id: string; api_key: string }>();
        await cachedPage(h(), key.api_key, threadId);
        const db = h().database.db;
        await afterNotified(db, changeTags.apiKey(key.id), () => db.query("UPDATE api_keys SET revoked_at = now() WHERE id = $1", [key.id]));
        const refused = await h().request({ method: "GET", url: `/threads/${threadId}/messages`, headers: { authorization: key.api_key } });
        assert.equal(refused.status, 401);
      });

      test("over HTTP, the latest page answered from memory is the route's answer, headers and bytes alike", async () => {
        const { organizationId, apiKey } = await h().organization({ agent: acmeAgent });
        const threadId = await h().thread(apiKey);
        await post(h(), apiKey, "/chat", { thread_id: threadId, message: "What are your opening hours?", service_config_name: "support" });
        const base = await h().server.listen({ port: 0, host: "127.0.0.1" });
        const get = (credential: string, path = `/threads/${threadId}/messages`) =>
          fetch(base + path, { headers: { authorization: credential, "x-request-id": "page-read-1" } });
        const routed = await get(apiKey);
        const remembered = await get(`Bearer ${apiKey}`);
        const headersOf = (response: Response) => [...response.headers].filter(([name]) => name !== "date");
        assert.deepEqual(headersOf(remembered), headersOf(routed));
        assert.equal(remembered.headers.get("x-request-id"), "page-read-1");
        const body = await routed.text();
        assert.equal(await remembered.text(), body);
        assert.deepEqual(JSON.parse(body), await pageOf(h(), apiKey, threadId));
        await post(h(), apiKey, "/chat", { thread_id: threadId, message: "Where is the office located?", service_config_name: "support" });
        assert.equal(((await (await get(apiKey)).json()) as Page).messages.length, 4);
        const limited = (await (await get(apiKey, `/threads/${threadId}/messages?limit=1`)).json()) as Page;
        assert.equal(limited.messages.length, 1);
        const key = (await h().admin("POST", `/admin/organizations/${organizationId}/api-keys`)).json<{ id: string; api_key: string }>();
        await get(key.api_key);
        assert.equal((await get(key.api_key)).status, 200);
        assert.equal((await h().admin("DELETE", `/admin/api-keys/${key.id}`)).status, 204);
        assert.equal((await get(key.api_key)).status, 401);
        const other = await h().thread(apiKey);
        const token = JSON.parse(await post(h(), apiKey, `/threads/${other}/token`, {})) as { access_token: string };
        assert.equal((await get(token.access_token)).status, 403, "a thread token of another thread is refused as before");
      });

      test("cached pages keep the FastAPI error shapes and the JSON content type", async () => {
        const { apiKey } = await h().organization({ agent: acmeAgent });
        const threadId = await h().thread(apiKey);
        await cachedPage(h(), apiKey, threadId);
        const hit = await h().request({ method: "GET", url: `/threads/${threadId}/messages`, headers: { authorization: apiKey } });
        assert.equal(hit.headers["content-type"], "application/json; charset=utf-8");
        assert.ok(typeof hit.headers["x-request-id"] === "string");
        assert.deepEqual(hit.json(), { messages: [], pagination: { cursor: null }, is_locked: false });
        const missing = await h().request({ method: "GET", url: `/threads/${threadId}/messages` });
        assert.equal(missing.status, 422);
        assert.deepEqual(missing.json(), { detail: [{ type: "missing", loc: ["header", "authorization"], msg: "Field required", input: null }] });
        const unknown = await h().request({ method: "GET", url: `/threads/${threadId}/messages`, headers: { authorization: "sk_nope" } });
        assert.equal(unknown.status, 401);
        assert.equal(unknown.headers["www-authenticate"], "Bearer");
        const other = await h().request({ method: "GET", url: `/threads/${uuidv7()}/messages`, headers: { authorization: apiKey } });
        assert.deepEqual([other.status, other.json()], [404, { detail: "Thread not found" }]);
      });
    }, { env: overrides },
  );
}

declareSuite("cached history pages and credentials", {});
declareSuite("history pages and credentials with the caches off", { HISTORY_CACHE_MB: "0", CREDENTIAL_CACHE_KEYS: "0", CHAT_SETUP_CACHE_MB: "0" });
