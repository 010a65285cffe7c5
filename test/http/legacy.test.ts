import assert from "node:assert/strict";
import { test } from "node:test";
import { forEachDatabase, type Harness } from "../support/harness.js";
import { knowledgeConfig } from "../support/fixtures.js";

const base = "/legacy";

function post(h: Harness, credential: string | undefined, path: string, payload?: unknown) {
  return h.request({
    method: "POST",
    url: `${base}${path}`,
    headers: credential ? { authorization: credential } : {},
    ...(payload === undefined ? {} : { payload: payload as object }),
  });
}

forEachDatabase("earlier-generation interface under /legacy", (h) => {
  test("create_thread, chat, retrieve_conversations: shapes of the earlier generation", async () => {
    const { apiKey } = await h().organization(knowledgeConfig);
    const created = await post(h(), apiKey, "/create_thread");
    assert.equal(created.status, 200);
    const threadId = created.json<{ thread_id: string }>().thread_id;
    const reply = await post(h(), `Bearer ${apiKey}`, "/chat", { thread_id: threadId, message: "opening hours?", service_mode_name: "support" });
    assert.deepEqual(reply.json(), { message: "We are open from 9 to 5 on weekdays." });
    const page = await post(h(), apiKey, `/retrieve_conversations?thread_id=${threadId}`);
    const body = page.json<{ messages: { role: string; conversation_id: string; message: string; message_id: string }[]; pagination: unknown }>();
    assert.deepEqual(
      body.messages.map((m) => [m.role, m.message, m.conversation_id]),
      [
        ["user", "opening hours?", "1"],
        ["AI", "We are open from 9 to 5 on weekdays.", "1"],
      ],
    );
    assert.deepEqual(body.pagination, { current_page: 1, total_pages: 1, total_items: 2 });
  });

  test("streaming legacy chat is NDJSON tokens then {message}", async () => {
    const { apiKey } = await h().organization(knowledgeConfig);
    const threadId = (await post(h(), apiKey, "/create_thread")).json<{ thread_id: string }>().thread_id;
    const response = await post(h(), apiKey, "/chat", { thread_id: threadId, message: "where is the office", service_mode_name: "support", streaming: true });
    const lines = response.body.trim().split("\n").map((line) => JSON.parse(line) as { token?: string; index?: number; message?: string });
    const final = lines.pop()!;
    assert.deepEqual(Object.keys(final), ["message"]);
    assert.equal(lines.map((line) => line.token).join(""), final.message);
    lines.forEach((line, index) => assert.equal(line.index, index));
  });

  test("retrieve_conversations pages chronologically and validates page and limit", async () => {
    const { apiKey } = await h().organization(knowledgeConfig);
    const threadId = (await post(h(), apiKey, "/create_thread")).json<{ thread_id: string }>().thread_id;
    for (let i = 0; i < 3; i += 1) await post(h(), apiKey, "/chat", { thread_id: threadId, message: `message ${i}`, service_mode_name: "support" });
    const second = (await post(h(), apiKey, `/retrieve_conversations?thread_id=${threadId}&page=2&limit=4`)).json<{
      messages: { message: string }[];
      pagination: unknown;
    }>();
    assert.deepEqual(second.messages.map((m) => m.message).slice(0, 1), ["message 2"]);
    assert.equal(second.messages.length, 2);
    assert.deepEqual(second.pagination, { current_page: 2, total_pages: 2, total_items: 6 });
    const beyond = (await post(h(), apiKey, `/retrieve_conversations?thread_id=${threadId}&page=9`)).json<{ messages: unknown[] }>();
    assert.deepEqual(beyond.messages, []);
    const bad = await post(h(), apiKey, `/retrieve_conversations?page=0&limit=101`);
    assert.deepEqual(
      bad.json<{ detail: { type: string; loc: unknown[] }[] }>().detail.map((d) => [d.type, d.loc]),
      [
        ["missing", ["query", "thread_id"]],
        ["greater_than_equal", ["query", "page"]],
        ["less_than_equal", ["query", "limit"]],
      ],
    );
  });

  test("end_conversation ends the active conversation, visible in the current history, and 400s otherwise", async () => {
    const { apiKey } = await h().organization({ ...knowledgeConfig, conversation: { lock_on_end: true } });
    const threadId = await h().thread(apiKey, { project_name: "support" });
    await h().request({ method: "POST", url: "/chat", headers: { authorization: apiKey }, payload: { thread_id: threadId, message: "hi", service_config_name: "support" } });
    const ended = await post(h(), `Bearer ${apiKey}`, "/end_conversation", { thread_id: threadId });
    assert.equal(ended.status, 200);
    assert.equal(typeof ended.json<{ message: string }>().message, "string");
    const history = (await h().request({ method: "GET", url: `/threads/${threadId}/messages`, headers: { authorization: apiKey } })).json<{
      messages: { conversation_end_time: string | null }[];
      is_locked: boolean;
    }>();
    assert.ok(history.messages.every((m) => m.conversation_end_time !== null));
    assert.equal(history.is_locked, true);
    const again = await post(h(), apiKey, "/end_conversation", { thread_id: threadId });
    assert.equal(again.status, 400);
    assert.equal(typeof again.json<{ detail: string }>().detail, "string");
    assert.equal((await post(h(), apiKey, "/end_conversation", { thread_id: "unknown" })).status, 400);
    const next = await post(h(), apiKey, "/chat", { thread_id: threadId, message: "hello again", service_mode_name: "support" });
    assert.equal(next.status, 200);
    const page = (await post(h(), apiKey, `/retrieve_conversations?thread_id=${threadId}`)).json<{ messages: { conversation_id: string }[] }>();
    assert.deepEqual(page.messages.map((m) => m.conversation_id), ["1", "1", "2", "2"]);
  });

  test("get_followup adds a billed assistant message without a user message, streamed or whole", async () => {
    const { apiKey } = await h().organization(knowledgeConfig);
    const threadId = (await post(h(), apiKey, "/create_thread")).json<{ thread_id: string }>().thread_id;
    await post(h(), apiKey, "/chat", { thread_id: threadId, message: "hello", service_mode_name: "support" });
    const followup = await post(h(), apiKey, "/get_followup", { thread_id: threadId, service_mode_name: "support" });
    assert.equal(followup.status, 200);
    assert.ok(followup.json<{ message: string }>().message.length > 0);
    const streamed = await post(h(), apiKey, "/get_followup", { thread_id: threadId, service_mode_name: "support", streaming: true, start_new_conversation: true });
    const lines = streamed.body.trim().split("\n").map((line) => JSON.parse(line) as { message?: string });
    assert.ok(lines.at(-1)!.message);
    const page = (await post(h(), apiKey, `/retrieve_conversations?thread_id=${threadId}`)).json<{ messages: { role: string; conversation_id: string }[] }>();
    assert.deepEqual(page.messages.map((m) => [m.role, m.conversation_id]), [["user", "1"], ["AI", "1"], ["AI", "1"], ["AI", "2"]]);
    const usage = (await h().request({ method: "GET", url: `/threads/${threadId}`, headers: { authorization: apiKey } })).json<{ usage: { billable_messages: number } }>();
    assert.equal(usage.usage.billable_messages, 3);
  });

  test("retrieve_conversation_summary summarizes the latest conversation, or fails as {error, status_code}", async () => {
    const { apiKey } = await h().organization(knowledgeConfig);
    const threadId = (await post(h(), apiKey, "/create_thread")).json<{ thread_id: string }>().thread_id;
    const none = await post(h(), apiKey, "/retrieve_conversation_summary", { thread_id: threadId });
    assert.equal(none.status, 404);
    assert.deepEqual(Object.keys(none.json<object>()), ["error", "status_code"]);
    assert.equal(none.json<{ status_code: number }>().status_code, 404);
    await post(h(), apiKey, "/chat", { thread_id: threadId, message: "What are your opening hours on weekdays?", service_mode_name: "support" });
    const summary = await post(h(), apiKey, "/retrieve_conversation_summary", { thread_id: threadId });
    assert.equal(summary.status, 200);
    assert.match(summary.json<{ conversation_summary: string }>().conversation_summary, /opening hours|open from 9 to 5/i);
  });

  test("generate-token issues a thread token that the current interface accepts; tokens are refused where the list says", async () => {
    const { apiKey } = await h().organization(knowledgeConfig);
    const threadId = (await post(h(), apiKey, "/create_thread")).json<{ thread_id: string }>().thread_id;
    const token = (await post(h(), apiKey, `/generate-token/${threadId}`)).json<{ access_token: string }>().access_token;
    assert.equal((await h().request({ method: "GET", url: `/threads/${threadId}/messages`, headers: { authorization: token } })).status, 200);
    assert.equal((await post(h(), token, "/chat", { thread_id: threadId, message: "hi", service_mode_name: "support" })).status, 200);
    assert.equal((await post(h(), token, `/retrieve_conversations?thread_id=${threadId}`)).status, 200);
    assert.equal((await post(h(), token, "/end_conversation", { thread_id: threadId })).status, 403);
    assert.equal((await post(h(), token, "/create_thread")).status, 403);
    assert.equal((await post(h(), undefined, "/create_thread")).status, 422);
  });

  test("a thread made by the current interface is used by the legacy one and back", async () => {
    const { apiKey } = await h().organization(knowledgeConfig);
    const threadId = await h().thread(apiKey);
    await post(h(), apiKey, "/chat", { thread_id: threadId, message: "hello", service_mode_name: "support" });
    const current = await h().request({ method: "POST", url: "/chat", headers: { authorization: apiKey }, payload: { thread_id: threadId, message: "opening hours", service_config_name: "support" } });
    assert.equal(current.json<{ extras: { conversation_id: number } }>().extras.conversation_id, 1);
    const openapi = (await h().request({ method: "GET", url: "/openapi.json" })).json<{ paths: Record<string, Record<string, { tags: string[] }>> }>();
    assert.deepEqual(openapi.paths["/legacy/chat"]!.post!.tags, ["legacy"]);
  });
});
