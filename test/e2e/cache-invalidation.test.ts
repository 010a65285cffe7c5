import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import pg from "pg";
import { uuidv7 } from "../../src/domain/shared/ids.js";
import { createPostgresDatabase, openedDatabases } from "../support/databases.js";
import { acmeAgent } from "../support/fixtures.js";
import { adminKey } from "../support/harness.js";
import { call, startServerProcess, waitUntil, type ServerProcess } from "../support/processes.js";

const postgresAvailable = openedDatabases().some((database) => database.name === "postgres");

interface Page {
  messages: { message: string; conversation_end_time: string | null }[];
  is_locked: boolean;
}

describe("caches of two server processes on one PostgreSQL", { skip: !postgresAvailable && "PostgreSQL not reachable" }, () => {
  let a: ServerProcess;
  let b: ServerProcess;
  let sql: pg.Client;
  let apiKey = "";
  let projectId = "";

  const page = async (server: ServerProcess, threadId: string): Promise<Page> => {
    const response = await call(server.url, "GET", `/threads/${threadId}/messages`, apiKey);
    assert.equal(response.status, 200, response.text);
    return response.json<Page>();
  };
  /** Two reads: the second is served from the instance's cache. */
  const cachedPage = async (server: ServerProcess, threadId: string): Promise<Page> => {
    await page(server, threadId);
    return page(server, threadId);
  };
  const chat = async (server: ServerProcess, threadId: string, message: string, extra: Record<string, unknown> = {}) => {
    const response = await call(server.url, "POST", "/chat", apiKey, { thread_id: threadId, message, service_config_name: "support", ...extra });
    assert.equal(response.status, 200, response.text);
  };
  const newThread = async () => (await call(a.url, "POST", "/threads", apiKey, {})).json<{ thread_id: string }>().thread_id;
  const listenerPids = async (): Promise<number[]> =>
    (await sql.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'parley-listener'")).rows.map(
      (row) => row.pid,
    );
  const listening = async (server: ServerProcess) => /^parley_database_listener_up 1$/m.test((await call(server.url, "GET", "/metrics")).text);

  before(async () => {
    const url = await createPostgresDatabase();
    [a, b] = await Promise.all([startServerProcess(url), startServerProcess(url)]);
    sql = new pg.Client({ connectionString: url });
    await sql.connect();
    const org = (await call(a.url, "POST", "/admin/organizations", `Bearer ${adminKey}`, { name: "Caches" })).json<{ id: string; api_key: string }>();
    apiKey = org.api_key;
    const project = await call(a.url, "POST", `/admin/organizations/${org.id}/projects`, `Bearer ${adminKey}`, { name: "support", config: { agent: acmeAgent } });
    assert.equal(project.status, 201, project.text);
    projectId = project.json<{ id: string }>().id;
  });
  after(async () => {
    await sql?.end();
    await Promise.all([a?.stop(), b?.stop()]);
  });

  test("a message posted through one instance reaches the other's cached page", async () => {
    const threadId = await newThread();
    await chat(a, threadId, "What are your opening hours?");
    assert.equal((await cachedPage(b, threadId)).messages.length, 2);
    await chat(a, threadId, "Where is the office located?", { streaming: true });
    await waitUntil(async () => (await page(b, threadId)).messages.length === 4, 10_000, "the second chat on the other instance");
  });

  test("ending a conversation and publishing a configuration through one instance flip is_locked on the other", async () => {
    const threadId = await newThread();
    await chat(a, threadId, "hello");
    assert.equal((await cachedPage(b, threadId)).is_locked, false);
    const locking = { config: { agent: acmeAgent, conversation: { lock_on_end: true } } };
    assert.equal((await call(a.url, "PUT", `/admin/projects/${projectId}/config`, `Bearer ${adminKey}`, locking)).status, 201);
    assert.equal((await call(a.url, "POST", "/legacy/end_conversation", apiKey, { thread_id: threadId })).status, 200);
    await waitUntil(async () => (await page(b, threadId)).is_locked, 10_000, "the lock on the other instance");
    assert.ok((await page(b, threadId)).messages.every((m) => m.conversation_end_time !== null));
    assert.equal((await call(a.url, "PUT", `/admin/projects/${projectId}/config`, `Bearer ${adminKey}`, { config: { agent: acmeAgent } })).status, 201);
    await waitUntil(async () => !(await page(b, threadId)).is_locked, 10_000, "the unlock on the other instance");
    await chat(a, threadId, "again", { start_new_conversation: true });
    await waitUntil(async () => (await page(b, threadId)).messages.length === 4, 10_000, "the new conversation on the other instance");
  });

  test("a dropped listener connection neither leaves a stale page nor stops invalidation once it is back", async () => {
    const threadId = await newThread();
    await chat(a, threadId, "hello");
    assert.equal((await cachedPage(b, threadId)).messages.length, 2);
    const dropped = await listenerPids();
    assert.equal(dropped.length, 2);
    await sql.query("SELECT pg_terminate_backend(pid) FROM unnest($1::int[]) AS pid", [dropped]);
    await waitUntil(async () => (await listenerPids()).every((pid) => !dropped.includes(pid)), 10_000, "the listeners' backends to end");
    // Stored while no instance listens: its notification is lost for both.
    await sql.query(
      `WITH next AS (UPDATE threads SET last_message_seq = last_message_seq + 1 WHERE id = $2 RETURNING last_message_seq)
       INSERT INTO messages (id, thread_id, seq, conversation_id, role, content) SELECT $1, $2, last_message_seq, 1, 'user', 'unannounced' FROM next`,
      [uuidv7(), threadId],
    );
    await waitUntil(async () => (await listenerPids()).length === 2 && (await listening(b)) && (await listening(a)), 10_000, "both listeners back");
    assert.equal((await cachedPage(b, threadId)).messages.at(-1)?.message, "unannounced");
    await chat(a, threadId, "after the reconnection");
    await waitUntil(async () => (await page(b, threadId)).messages.length === 5, 10_000, "the chat after the reconnection on the other instance");
  });
});
