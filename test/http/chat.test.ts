import assert from "node:assert/strict";
import { test } from "node:test";
import { knowledgeConfig } from "../support/fixtures.js";
import { forEachDatabase, type Harness } from "../support/harness.js";

interface ChatBody {
  message: string;
  extras: { user_message_id: string; conversation_id: number; reply_message_id: string };
}

async function chat(h: Harness, credential: string, payload: Record<string, unknown>) {
  return h.request({ method: "POST", url: "/chat", headers: { authorization: credential }, payload: { service_config_name: "support", ...payload } });
}

forEachDatabase("POST /chat with the built-in agent", (h) => {
  test("a message gets the best knowledge answer, with ids of both stored messages", async () => {
    const { apiKey } = await h().organization(knowledgeConfig);
    const threadId = await h().thread(apiKey);
    const response = await chat(h(), apiKey, { thread_id: threadId, message: "when are you open? what hours" });
    assert.equal(response.status, 200);
    const body = response.json<ChatBody>();
    assert.equal(body.message, "We are open from 9 to 5 on weekdays.");
    assert.equal(body.extras.conversation_id, 1);
    const history = await h().request({ method: "GET", url: `/threads/${threadId}/messages`, headers: { authorization: apiKey } });
    const messages = history.json<{ messages: { message_id: string; role: string; message: string; extras: Record<string, unknown> }[] }>().messages;
    assert.deepEqual(
      messages.map((m) => [m.message_id, m.role, m.message]),
      [
        [body.extras.user_message_id, "user", "when are you open? what hours"],
        [body.extras.reply_message_id, "assistant", body.message],
      ],
    );
    assert.equal(messages[0]!.extras.user_type, "user");
  });

  test("the first message of a conversation without a match gets the greeting, later ones the fallback", async () => {
    const { apiKey } = await h().organization(knowledgeConfig);
    const threadId = await h().thread(apiKey);
    assert.equal((await chat(h(), apiKey, { thread_id: threadId, message: "hi there" })).json<ChatBody>().message, "Welcome to Acme!");
    assert.equal((await chat(h(), apiKey, { thread_id: threadId, message: "tell me a joke", user_type: "agent" })).json<ChatBody>().message, "Sorry, I cannot help with that.");
  });

  test("a streamed reply is NDJSON tokens whose concatenation is the final message", async () => {
    const { apiKey } = await h().organization(knowledgeConfig);
    const threadId = await h().thread(apiKey);
    const response = await chat(h(), apiKey, { thread_id: threadId, message: "where is your office located", streaming: true });
    assert.equal(response.status, 200);
    assert.equal(response.headers["content-type"], "application/x-ndjson");
    // Like every other answer, the stream may be read by a page of any origin (the widget) and names its request.
    assert.equal(response.headers["access-control-allow-origin"], "*");
    assert.ok(typeof response.headers["x-request-id"] === "string");
    const lines = response.body.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    const final = lines.pop() as unknown as ChatBody;
    assert.ok(lines.length > 1);
    lines.forEach((line, index) => assert.equal(line.index, index));
    assert.equal(lines.map((line) => line.token).join(""), final.message);
    assert.equal(final.message, "Our office is at 1 Main Street.");
    assert.equal(final.extras.conversation_id, 1);
  });

  test("with Accept: text/event-stream the stream is server-sent events", async () => {
    const { apiKey } = await h().organization(knowledgeConfig);
    const threadId = await h().thread(apiKey);
    const response = await h().request({
      method: "POST",
      url: "/chat",
      headers: { authorization: apiKey, accept: "text/event-stream" },
      payload: { thread_id: threadId, message: "opening hours", service_config_name: "support", streaming: true },
    });
    assert.match(String(response.headers["content-type"]), /^text\/event-stream/);
    const events = response.body.trim().split("\n\n").map((block) => block.split("\n"));
    assert.equal(events[0]![0], "event: token");
    assert.equal(events.at(-1)![0], "event: message");
    assert.equal(JSON.parse(events.at(-1)![1]!.slice("data: ".length)).message, "We are open from 9 to 5 on weekdays.");
  });

  test("start_new_conversation ends the active conversation and opens the next", async () => {
    const { apiKey } = await h().organization(knowledgeConfig);
    const threadId = await h().thread(apiKey);
    await chat(h(), apiKey, { thread_id: threadId, message: "hello" });
    const second = await chat(h(), apiKey, { thread_id: threadId, message: "opening hours?", start_new_conversation: true });
    assert.equal(second.json<ChatBody>().extras.conversation_id, 2);
    assert.equal(second.json<ChatBody>().message, "We are open from 9 to 5 on weekdays.");
    const messages = (await h().request({ method: "GET", url: `/threads/${threadId}/messages`, headers: { authorization: apiKey } })).json<{
      messages: { conversation_id: number; conversation_end_time: string | null }[];
    }>().messages;
    assert.deepEqual(messages.map((m) => m.conversation_id), [1, 1, 2, 2]);
    const firstEnd = messages[0]!.conversation_end_time;
    assert.ok(firstEnd && !Number.isNaN(Date.parse(firstEnd)));
    // Every message of a conversation carries its end, not only the first one the page read looked up.
    assert.deepEqual(messages.map((m) => m.conversation_end_time), [firstEnd, firstEnd, null, null]);
  });

  test("a page walked toward newer messages carries every message's conversation end", async () => {
    const { apiKey } = await h().organization(knowledgeConfig);
    const threadId = await h().thread(apiKey);
    for (const start_new_conversation of [false, true, true]) await chat(h(), apiKey, { thread_id: threadId, message: "hello", start_new_conversation });
    type Page = { messages: { conversation_id: number; conversation_end_time: string | null }[]; pagination: { cursor: string | null } };
    const get = async (query: string) => (await h().request({ method: "GET", url: `/threads/${threadId}/messages?${query}`, headers: { authorization: apiKey } })).json<Page>();
    const latest = await get("limit=4");
    const newer = await get(`limit=4&newer=true&cursor=${latest.pagination.cursor}`);
    assert.deepEqual(newer.messages.map((m) => m.conversation_id), [2, 2, 3, 3]);
    const secondEnd = newer.messages[0]!.conversation_end_time;
    assert.ok(secondEnd && !Number.isNaN(Date.parse(secondEnd)));
    assert.deepEqual(newer.messages.map((m) => m.conversation_end_time), [secondEnd, secondEnd, null, null]);
    assert.deepEqual(newer.messages, latest.messages);
  });

  test("20 parallel chats on one thread end with 40 alternating messages in one conversation, billed exactly", async () => {
    const { apiKey } = await h().organization(knowledgeConfig);
    const threadId = await h().thread(apiKey);
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) => chat(h(), apiKey, { thread_id: threadId, message: `question ${i} about opening hours`, streaming: i % 2 === 0 })),
    );
    assert.ok(responses.every((response) => response.status === 200));
    const page = (await h().request({ method: "GET", url: `/threads/${threadId}/messages?limit=100`, headers: { authorization: apiKey } })).json<{
      messages: { role: string; conversation_id: number; message: string }[];
    }>();
    assert.equal(page.messages.length, 40);
    page.messages.forEach((message, index) => assert.equal(message.role, index % 2 === 0 ? "user" : "assistant"));
    assert.ok(page.messages.every((message) => message.conversation_id === 1));
    const thread = (await h().request({ method: "GET", url: `/threads/${threadId}`, headers: { authorization: apiKey } })).json<{
      usage: { billable_messages: number; billable_message_cost: number; total_cost: number };
    }>();
    assert.equal(thread.usage.billable_messages, 20);
    assert.equal(thread.usage.billable_message_cost, 0.04);
    assert.equal(thread.usage.total_cost, 0.04);
  });

  test("a thread token chats on its own thread only", async () => {
    const { apiKey } = await h().organization(knowledgeConfig);
    const threadId = await h().thread(apiKey);
    const other = await h().thread(apiKey);
    const token = (await h().request({ method: "POST", url: `/threads/${threadId}/token`, headers: { authorization: apiKey } })).json<{ access_token: string }>().access_token;
    assert.equal((await chat(h(), `Bearer ${token}`, { thread_id: threadId, message: "hi" })).status, 200);
    assert.equal((await chat(h(), token, { thread_id: other, message: "hi" })).status, 403);
  });

  test("unknown projects, versions and threads are 404; every field is validated", async () => {
    const { apiKey, projectId } = await h().organization(knowledgeConfig);
    const threadId = await h().thread(apiKey);
    assert.deepEqual((await chat(h(), apiKey, { thread_id: threadId, message: "hi", service_config_name: "nope" })).json(), { detail: "Project not found" });
    assert.deepEqual((await chat(h(), apiKey, { thread_id: threadId, message: "hi", config_version_id: "00000000-0000-4000-8000-000000000000" })).json(), {
      detail: "Configuration version not found",
    });
    assert.deepEqual((await chat(h(), apiKey, { thread_id: "nope", message: "hi" })).json(), { detail: "Thread not found" });
    const badSimulate = await chat(h(), apiKey, { thread_id: threadId, message: "", simulate: { max_turns: 0, create: "maybe" } });
    assert.deepEqual(
      badSimulate.json<{ detail: { type: string; loc: unknown[] }[] }>().detail.map((issue) => [issue.type, issue.loc]),
      [
        ["string_too_short", ["body", "message"]],
        ["greater_than_equal", ["body", "simulate", "max_turns"]],
        ["bool_parsing", ["body", "simulate", "create"]],
      ],
    );
    const tooLong = await chat(h(), apiKey, { thread_id: threadId, message: "x".repeat(32_001) });
    assert.deepEqual(tooLong.json<{ detail: { ctx: unknown }[] }>().detail[0]!.ctx, { max_length: 32000 });
    const published = await h().admin("PUT", `/admin/projects/${projectId}/config`, { config: { agent: { greeting: "New greeting" } } });
    const oldVersion = (await h().admin("GET", `/admin/projects/${projectId}`)).json<{ versions: { id: string }[] }>().versions[0]!.id;
    assert.equal(published.status, 201);
    const fresh = await h().thread(apiKey);
    assert.equal((await chat(h(), apiKey, { thread_id: fresh, message: "hi" })).json<ChatBody>().message, "New greeting");
    const pinned = await h().thread(apiKey);
    assert.equal((await chat(h(), apiKey, { thread_id: pinned, message: "hi", config_version_id: oldVersion })).json<ChatBody>().message, "Welcome to Acme!");
  });
});
