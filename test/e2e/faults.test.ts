import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { createPostgresDatabase, openedDatabases } from "../support/databases.js";
import { startFakeOpenAi, type FakeLlmServer } from "../support/fake-llm-servers.js";
import { adminKey } from "../support/harness.js";
import { call, startServerProcess, waitUntil, type ServerProcess } from "../support/processes.js";
import { TemporaryPostgres } from "../support/temporary-postgres.js";

const postgresAvailable = openedDatabases().some((database) => database.name === "postgres");

async function organization(url: string, config: unknown): Promise<string> {
  const org = (await call(url, "POST", "/admin/organizations", `Bearer ${adminKey}`, { name: "Faults" })).json<{ id: string; api_key: string }>();
  const project = await call(url, "POST", `/admin/organizations/${org.id}/projects`, `Bearer ${adminKey}`, { name: "support", config });
  assert.equal(project.status, 201, project.text);
  return org.api_key;
}

describe("faults", { skip: !postgresAvailable && "PostgreSQL not reachable" }, () => {
  let provider: FakeLlmServer;
  before(async () => {
    provider = await startFakeOpenAi();
  });
  after(async () => {
    await provider.close();
  });

  test("an instance killed mid-stream leaves the user's message, no half reply and no stuck lock", async () => {
    const url = await createPostgresDatabase();
    const doomed = await startServerProcess(url);
    const survivor = await startServerProcess(url);
    try {
      const apiKey = await organization(doomed.url, { agent: { provider: "openai", base_url: provider.url, model: "m", api_key: "k" } });
      const threadId = (await call(doomed.url, "POST", "/threads", apiKey, {})).json<{ thread_id: string }>().thread_id;
      provider.setBehaviour({ chunks: Array.from({ length: 40 }, (_, i) => `w${i} `), chunkDelayMs: 100 });
      const response = await fetch(`${doomed.url}/chat`, {
        method: "POST",
        headers: { authorization: apiKey, "content-type": "application/json" },
        body: JSON.stringify({ thread_id: threadId, message: "tell me a long story", service_config_name: "support", streaming: true }),
      });
      const reader = response.body!.getReader();
      await reader.read();
      await doomed.stop("SIGKILL");
      await reader.read().catch(() => undefined);

      provider.setBehaviour({ chunks: ["short answer"] });
      const started = Date.now();
      const next = await call(survivor.url, "POST", "/chat", apiKey, { thread_id: threadId, message: "still there?", service_config_name: "support" });
      assert.equal(next.status, 200, next.text);
      assert.ok(Date.now() - started < 3_000, `the next chat waited ${Date.now() - started} ms for a dead instance's lock`);
      const messages = (await call(survivor.url, "GET", `/threads/${threadId}/messages`, apiKey)).json<{ messages: { role: string; message: string }[] }>().messages;
      assert.deepEqual(
        messages.map((m) => [m.role, m.message]),
        [
          ["user", "tell me a long story"],
          ["user", "still there?"],
          ["assistant", "short answer"],
        ],
      );
    } finally {
      await doomed.stop("SIGKILL");
      await survivor.stop();
    }
  });

  test("PostgreSQL restarted under load: clean 503s while it is down, /readyz says so, and recovery without a restart", async () => {
    const cluster = await TemporaryPostgres.create();
    let server: ServerProcess | undefined;
    try {
      server = await startServerProcess(cluster.url);
      const apiKey = await organization(server.url, {});
      const threadId = (await call(server.url, "POST", "/threads", apiKey, {})).json<{ thread_id: string }>().thread_id;
      const statuses = new Map<number, number>();
      let running = true;
      const load = (async () => {
        while (running) {
          const response: Awaited<ReturnType<typeof call>> | undefined = await call(server!.url, "POST", "/chat", apiKey, { thread_id: threadId, message: "ping", service_config_name: "support" }).catch(() => undefined);
          if (response) {
            statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
            if (response.status >= 500) assert.equal(response.status, 503, response.text);
            if (response.status === 503) assert.equal(typeof response.json<{ detail: string }>().detail, "string");
          }
        }
      })();
      await waitUntil(async () => (statuses.get(200) ?? 0) >= 5, 20_000, "load before the restart");
      await cluster.stop();
      await waitUntil(async () => (await call(server!.url, "GET", "/readyz")).status === 503, 20_000, "/readyz to report the outage");
      await waitUntil(async () => (statuses.get(503) ?? 0) >= 1, 20_000, "a 503 while PostgreSQL is down");
      await cluster.start();
      await waitUntil(async () => (await call(server!.url, "GET", "/readyz")).status === 200, 30_000, "/readyz to recover");
      const okBefore = statuses.get(200) ?? 0;
      await waitUntil(async () => (statuses.get(200) ?? 0) > okBefore + 5, 30_000, "chats to succeed again");
      running = false;
      await load;
      assert.deepEqual([...statuses.keys()].filter((status) => status !== 200 && status !== 503), []);
      const page = (await call(server.url, "GET", `/threads/${threadId}/messages?limit=100`, apiKey)).json<{ messages: { role: string }[] }>();
      for (let i = 1; i < page.messages.length; i += 1) {
        if (page.messages[i]!.role === "assistant") assert.equal(page.messages[i - 1]!.role, "user", "every reply follows its user message");
      }
    } catch (error) {
      throw new Error(`${(error as Error).message}\nserver output:\n${server?.output() ?? ""}`);
    } finally {
      await server?.stop();
      await cluster.destroy();
    }
  });
});
