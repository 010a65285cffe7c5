import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createPostgresDatabase, openedDatabases } from "../support/databases.js";
import { adminKey } from "../support/harness.js";
import { call, startServerProcess, type ServerProcess } from "../support/processes.js";

const postgresAvailable = openedDatabases().some((database) => database.name === "postgres");

describe("several server processes on one PostgreSQL", { skip: !postgresAvailable && "PostgreSQL not reachable" }, () => {
  let servers: ServerProcess[] = [];
  let apiKey = "";
  let organizationId = "";

  before(async () => {
    const url = await createPostgresDatabase();
    servers = [await startServerProcess(url), await startServerProcess(url), await startServerProcess(url)];
    const org = await call(servers[0]!.url, "POST", "/admin/organizations", `Bearer ${adminKey}`, { name: "Scale" });
    ({ id: organizationId, api_key: apiKey } = org.json<{ id: string; api_key: string }>());
    const project = await call(servers[1]!.url, "POST", `/admin/organizations/${organizationId}/projects`, `Bearer ${adminKey}`, {
      name: "support",
      config: { agent: { knowledge: [{ question: "opening hours", answer: "Nine to five." }] }, pricing: { message_usd: 0.003 } },
    });
    assert.equal(project.status, 201, project.text);
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
});
