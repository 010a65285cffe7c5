import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import WebSocket from "ws";
import { createPostgresDatabase, openedDatabases } from "../support/databases.js";
import { adminKey } from "../support/harness.js";
import { call, startServerProcess, waitUntil, type ServerProcess } from "../support/processes.js";

const postgresAvailable = openedDatabases().some((database) => database.name === "postgres");

describe("several server processes on one PostgreSQL", { skip: !postgresAvailable && "PostgreSQL not reachable" }, () => {
  let servers: ServerProcess[] = [];
  let apiKey = "";
  let organizationId = "";
  let projectId = "";

  before(async () => {
    const url = await createPostgresDatabase();
    servers = await Promise.all([startServerProcess(url), startServerProcess(url), startServerProcess(url)]);
    const org = await call(servers[0]!.url, "POST", "/admin/organizations", `Bearer ${adminKey}`, { name: "Scale" });
    ({ id: organizationId, api_key: apiKey } = org.json<{ id: string; api_key: string }>());
    const project = await call(servers[1]!.url, "POST", `/admin/organizations/${organizationId}/projects`, `Bearer ${adminKey}`, {
      name: "support",
      config: {
        agent: { knowledge: [{ question: "opening hours", answer: "Nine to five." }] },
        pricing: { message_usd: 0.003 },
        voice: {
          accounts: [{ id: "6f1c1f9e-2d7a-4d2b-9a51-3c1b7f0e5a10", phone_numbers: ["+14155550100"] }],
          simulated: { script: ["Hello?", "What are your opening hours?", "Bye."], ring_ms: 20, turn_ms: 30 },
        },
      },
    });
    assert.equal(project.status, 201, project.text);
    projectId = project.json<{ id: string }>().id;
  });
  after(async () => {
    await Promise.all(servers.map((server) => server.stop()));
  });

  test("chats on one thread sent to three instances at once never interleave, and usage stays exact", async () => {
    const threadId = (await call(servers[0]!.url, "POST", "/threads", apiKey, {})).json<{ thread_id: string }>().thread_id;
    const responses = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        call(servers[i % 3]!.url, "POST", "/chat", apiKey, { thread_id: threadId, message: `opening hours ${i}`, service_config_name: "support", streaming: i % 2 === 0 }),
      ),
    );
    assert.ok(responses.every((response) => response.status === 200), responses.map((r) => r.status).join(","));
    const page = (await call(servers[2]!.url, "GET", `/threads/${threadId}/messages?limit=100`, apiKey)).json<{ messages: { role: string; message: string; conversation_id: number }[] }>();
    assert.equal(page.messages.length, 60);
    page.messages.forEach((message, index) => {
      assert.equal(message.role, index % 2 === 0 ? "user" : "assistant");
      if (index % 2 === 1) assert.equal(message.message, "Nine to five.");
    });
    const usage = (await call(servers[1]!.url, "GET", `/threads/${threadId}`, apiKey)).json<{ usage: { billable_messages: number; billable_message_cost: number } }>().usage;
    assert.deepEqual([usage.billable_messages, usage.billable_message_cost], [30, 0.09]);
  });

  test("a key revoked through one instance is refused by every instance at once", async () => {
    const key = (await call(servers[0]!.url, "POST", `/admin/organizations/${organizationId}/api-keys`, `Bearer ${adminKey}`)).json<{ id: string; api_key: string }>();
    for (const server of servers) assert.equal((await call(server.url, "POST", "/threads", key.api_key, {})).status, 200);
    assert.equal((await call(servers[2]!.url, "DELETE", `/admin/api-keys/${key.id}`, `Bearer ${adminKey}`)).status, 204);
    for (const server of servers) assert.equal((await call(server.url, "POST", "/threads", key.api_key, {})).status, 401);
  });

  test("a scheduled call starts exactly once while three instances poll for it", async () => {
    const threadId = (await call(servers[0]!.url, "POST", "/threads", apiKey, {})).json<{ thread_id: string }>().thread_id;
    const scheduledFor = new Date(Date.now() + 1_500).toISOString();
    const created = await call(servers[1]!.url, "POST", `/voice/${threadId}/phone-call`, apiKey, { callee: "+14155552671", project_id: projectId, scheduled_for: scheduledFor });
    assert.equal(created.status, 200, created.text);
    const callId = created.json<{ id: string; status: string }>().id;
    assert.equal(created.json<{ status: string }>().status, "scheduled");
    await waitUntil(async () => (await call(servers[2]!.url, "GET", `/calls/${callId}`, apiKey)).json<{ status: string }>().status === "ended", 30_000, "the call to end");
    const messages = (await call(servers[0]!.url, "GET", `/threads/${threadId}/messages?limit=100`, apiKey)).json<{ messages: { message: string; conversation_id: number }[] }>().messages;
    assert.equal(messages.filter((m) => m.message === "Hello?").length, 1, "the callee's first line was spoken once");
    assert.deepEqual([...new Set(messages.map((m) => m.conversation_id))], [1], "one call, one conversation");
  });

  test("events published by one instance reach a WebSocket held on another", async () => {
    const threadId = (await call(servers[0]!.url, "POST", "/threads", apiKey, {})).json<{ thread_id: string }>().thread_id;
    const socket = new WebSocket(`${servers[1]!.url.replace("http", "ws")}/threads/${threadId}/events?token=${encodeURIComponent(apiKey)}`);
    const received: { type: string; message?: { role: string } }[] = [];
    socket.on("message", (data) => received.push(JSON.parse(String(data)) as { type: string; message?: { role: string } }));
    await new Promise((resolve, reject) => {
      socket.once("open", resolve);
      socket.once("error", reject);
    });
    try {
      const chat = await call(servers[2]!.url, "POST", "/chat", apiKey, { thread_id: threadId, message: "opening hours?", service_config_name: "support" });
      assert.equal(chat.status, 200);
      await waitUntil(async () => received.filter((event) => event.type === "message.created").length === 2, 10_000, "both message events");
      assert.deepEqual(received.filter((event) => event.type === "message.created").map((event) => event.message?.role), ["user", "assistant"]);
    } finally {
      socket.close();
    }
  });
});
