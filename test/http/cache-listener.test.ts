import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import pino from "pino";
import { createApp, type App } from "../../src/app.js";
import { uuidv7 } from "../../src/domain/shared/ids.js";
import { cacheHeardChannel, changeTags } from "../../src/domain/cache/invalidation.js";
import { openPostgres } from "../../src/store/postgres-db.js";
import { openedDatabases } from "../support/databases.js";
import { acmeAgent } from "../support/fixtures.js";
import { adminKey, testConfig } from "../support/harness.js";
import { afterNotified, controlledListener, type ControlledListener } from "../support/invalidations.js";

interface Page {
  messages: { message: string; conversation_end_time: string | null }[];
  is_locked: boolean;
}

for (const database of openedDatabases()) {
  describe(`caches whose notifications are late or lost [${database.name}]`, () => {
    let app: App;
    let listener: ControlledListener;
    let apiKey = "";
    let organizationId = "";
    let projectId = "";

    const request = async (method: "GET" | "POST" | "PUT" | "DELETE", url: string, credential: string, payload?: Record<string, unknown>) => {
      const response = await app.server.inject({ method, url, headers: { authorization: credential }, ...(payload ? { payload } : {}) });
      return { status: response.statusCode, json: <T>() => JSON.parse(response.body) as T };
    };
    const page = async (threadId: string): Promise<Page> => {
      const response = await request("GET", `/threads/${threadId}/messages`, apiKey);
      assert.equal(response.status, 200);
      return response.json<Page>();
    };
    const cachedPage = async (threadId: string): Promise<Page> => {
      await page(threadId);
      return page(threadId);
    };
    const chat = async (threadId: string, message: string) => {
      assert.equal((await request("POST", "/chat", apiKey, { thread_id: threadId, message, service_config_name: "support" })).status, 200);
    };
    const newThread = async () => (await request("POST", "/threads", apiKey, {})).json<{ thread_id: string }>().thread_id;
    /** A message stored by someone else (another instance), whose notification is the only news of it. */
    const insertElsewhere = (threadId: string, content: string) =>
      database.db.query(
        `WITH next AS (UPDATE threads SET last_message_seq = last_message_seq + 1 WHERE id = $2 RETURNING last_message_seq)
         INSERT INTO messages (id, thread_id, seq, conversation_id, role, content) SELECT $1, $2, last_message_seq, 1, 'user', $3 FROM next`,
        [uuidv7(), threadId, content],
      );

    before(async () => {
      listener = controlledListener(database.db);
      app = await createApp(testConfig(database), { db: listener.db, logger: pino({ level: "silent" }) });
      await app.server.ready();
      const org = (await request("POST", "/admin/organizations", `Bearer ${adminKey}`, { name: "Listener org" })).json<{ id: string; api_key: string }>();
      ({ id: organizationId, api_key: apiKey } = org);
      const project = await request("POST", `/admin/organizations/${organizationId}/projects`, `Bearer ${adminKey}`, { name: "support", config: { agent: acmeAgent } });
      projectId = project.json<{ id: string }>().id;
    });
    after(async () => {
      listener.deliver();
      await app.close();
    });

    test("writes served by the instance show on its cached pages before their notifications arrive", async () => {
      const threadId = await newThread();
      await cachedPage(threadId);
      listener.hold();
      try {
        await chat(threadId, "hello");
        assert.equal((await cachedPage(threadId)).messages.length, 2);
        assert.equal((await request("POST", "/legacy/end_conversation", apiKey, { thread_id: threadId })).status, 200);
        assert.ok((await cachedPage(threadId)).messages.every((m) => m.conversation_end_time !== null));
        const locking = { config: { agent: acmeAgent, conversation: { lock_on_end: true } } };
        assert.equal((await request("PUT", `/admin/projects/${projectId}/config`, `Bearer ${adminKey}`, locking)).status, 201);
        assert.equal((await cachedPage(threadId)).is_locked, true);
        assert.equal((await request("PUT", `/admin/projects/${projectId}/config`, `Bearer ${adminKey}`, { config: { agent: acmeAgent } })).status, 201);
        assert.equal((await cachedPage(threadId)).is_locked, false);
      } finally {
        listener.deliver();
      }
    });

    test("revoking a key answers only once the instance has heard the revocation", async () => {
      const key = (await request("POST", `/admin/organizations/${organizationId}/api-keys`, `Bearer ${adminKey}`)).json<{ id: string; api_key: string }>();
      const threadId = await newThread();
      assert.equal((await request("GET", `/threads/${threadId}/messages`, key.api_key)).status, 200);
      listener.hold();
      let answered = false;
      let revoked: Promise<{ status: number }> | undefined;
      await afterNotified(database.db, changeTags.apiKey(key.id), async () => {
        revoked = request("DELETE", `/admin/api-keys/${key.id}`, `Bearer ${adminKey}`).then((response) => {
          answered = true;
          return response;
        });
      });
      assert.equal(answered, false, "the revocation waits for its notification");
      listener.deliver();
      assert.equal((await revoked)?.status, 204);
      assert.equal((await request("GET", `/threads/${threadId}/messages`, key.api_key)).status, 401);
    });

    if (database.url) {
      const url = database.url;
      test("a revocation answers only once every other instance has dropped the key", async () => {
        const ownConnection = openPostgres(url, 4);
        const lateListener = controlledListener(ownConnection, { innerSession: true });
        const late = await createApp(testConfig(database), { db: lateListener.db, logger: pino({ level: "silent" }) });
        const revoking = await createApp(testConfig(database), { db: database.db, logger: pino({ level: "silent" }) });
        try {
          const key = (await request("POST", `/admin/organizations/${organizationId}/api-keys`, `Bearer ${adminKey}`)).json<{ id: string; api_key: string }>();
          const onLate = async () => (await late.server.inject({ method: "POST", url: "/threads", headers: { authorization: key.api_key }, payload: {} })).statusCode;
          assert.equal(await onLate(), 200, "the late instance has the key cached");
          lateListener.hold();
          const tag = changeTags.apiKey(key.id);
          let answered = false;
          let revoked: Promise<number> | undefined;
          // The revoking instance's own acknowledgement is heard: without the others' it would answer now.
          let ownAcknowledgement!: () => void;
          const acknowledged = new Promise<void>((resolve) => (ownAcknowledgement = resolve));
          const unlisten = await database.db.listen(cacheHeardChannel, (payload) => {
            if (payload === `${database.db.listenerSession} ${tag}`) ownAcknowledgement();
          });
          try {
            revoked = revoking.server
              .inject({ method: "DELETE", url: `/admin/api-keys/${key.id}`, headers: { authorization: `Bearer ${adminKey}` } })
              .then((response) => {
                answered = true;
                return response.statusCode;
              });
            await acknowledged;
            await new Promise((resolve) => setTimeout(resolve, 50));
          } finally {
            await unlisten();
          }
          assert.equal(answered, false, "the revocation waits for the instance that has not heard it");
          assert.equal(await onLate(), 200, "the late instance has not dropped the key yet");
          lateListener.deliver();
          assert.equal(await revoked, 204);
          assert.equal(await onLate(), 401);
        } finally {
          lateListener.deliver();
          await revoking.close();
          await late.close();
          await ownConnection.close();
        }
      });
    }

    test("while the listener is down the caches are bypassed, and they serve again once it is back", async () => {
      const threadId = await newThread();
      await chat(threadId, "hello");
      assert.equal((await cachedPage(threadId)).messages.length, 2);
      listener.drop();
      try {
        await insertElsewhere(threadId, "while the listener was down");
        assert.equal((await cachedPage(threadId)).messages.length, 3);
        await insertElsewhere(threadId, "still down");
        assert.equal((await cachedPage(threadId)).messages.length, 4);
      } finally {
        listener.reconnect();
      }
      assert.equal((await cachedPage(threadId)).messages.length, 4);
      await afterNotified(database.db, changeTags.thread(threadId), () => insertElsewhere(threadId, "after the reconnection"));
      assert.equal((await cachedPage(threadId)).messages.at(-1)?.message, "after the reconnection");
    });

    test("a read that began before a write does not leave the page from before it in the cache", async () => {
      const threadId = await newThread();
      await chat(threadId, "hello");
      listener.hold();
      try {
        // The read and the write race; whichever wins, once both are done the page shows the write.
        await Promise.all([page(threadId), chat(threadId, "racing")]);
        assert.equal((await cachedPage(threadId)).messages.length, 4);
      } finally {
        listener.deliver();
      }
    });
  });
}
