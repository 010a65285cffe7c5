import assert from "node:assert/strict";
import { before, test } from "node:test";
import pino from "pino";
import { EventsService } from "../../src/domain/events/events-service.js";
import { EventsStore } from "../../src/store/events-store.js";
import { listen, TestSocket, voiceSuite } from "./support.js";
import { forEachDatabase } from "../support/harness.js";

forEachDatabase("the thread events WebSocket", (h) => {
  let base = "";
  before(async () => {
    base = await listen(h().app);
  });

  async function chat(apiKey: string, threadId: string, message: string) {
    const response = await h().request({
      method: "POST",
      url: "/chat",
      headers: { authorization: apiKey },
      payload: { thread_id: threadId, message, service_config_name: "support" },
    });
    assert.equal(response.status, 200);
  }

  test("chat messages arrive live as message.created with increasing seq", async () => {
    const { apiKey } = await h().organization();
    const threadId = await h().thread(apiKey);
    const events = await TestSocket.open(`${base}/threads/${threadId}/events`, { authorization: `Bearer ${apiKey}` });
    await chat(apiKey, threadId, "What are your opening hours?");
    const first = await events.next((event) => event.type === "message.created");
    const second = await events.next((event) => event.type === "message.created");
    assert.deepEqual(first.message && { ...(first.message as object), message_id: "-" }, {
      message_id: "-",
      role: "user",
      message: "What are your opening hours?",
      conversation_id: 1,
    });
    assert.equal((second.message as { message: string }).message, "We are open from 9 to 5 on weekdays.");
    assert.equal(Number(second.seq), Number(first.seq) + 1);
    events.close();
  });

  test("?after=SEQ replays the events missed since SEQ, then goes on live", async () => {
    const { apiKey } = await h().organization();
    const threadId = await h().thread(apiKey);
    await chat(apiKey, threadId, "hello");
    await chat(apiKey, threadId, "Where is the office located?");
    const deadline = Date.now() + 5000;
    while ((await h().database.db.query<{ n: number }>("SELECT count(*)::int AS n FROM thread_events WHERE thread_id = $1", [threadId]))[0]!.n < 4) {
      assert.ok(Date.now() < deadline, "the chat's events were not stored");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const all = await TestSocket.open(`${base}/threads/${threadId}/events?after=0`, { authorization: apiKey });
    const replayed = [await all.next(() => true), await all.next(() => true), await all.next(() => true), await all.next(() => true)];
    assert.deepEqual(replayed.map((event) => event.seq), [1, 2, 3, 4]);
    const missed = await TestSocket.open(`${base}/threads/${threadId}/events?after=2`, { authorization: apiKey });
    assert.equal((await missed.next(() => true)).seq, 3);
    assert.equal((await missed.next(() => true)).seq, 4);
    await chat(apiKey, threadId, "thanks");
    assert.equal((await missed.next(() => true)).seq, 5);
    assert.equal((await all.next(() => true)).seq, 5);
    all.close();
    missed.close();
  });

  test("an event stored by another instance reaches the socket (LISTEN/NOTIFY)", async () => {
    const other = await h().startApp({ ownPool: true });
    const otherBase = await listen(other);
    const { apiKey } = await h().organization();
    const threadId = await h().thread(apiKey);
    const events = await TestSocket.open(`${otherBase}/threads/${threadId}/events`, { authorization: apiKey });
    await chat(apiKey, threadId, "Where is the office located?");
    assert.equal(((await events.next((event) => event.type === "message.created" && (event.message as { role: string }).role === "assistant")).message as { message: string }).message, "Our office is at 1 Main Street.");
    events.close();
  });

  test("the socket answers an application ping, and closes on a flood of messages", async () => {
    const { apiKey } = await h().organization();
    const threadId = await h().thread(apiKey);
    const events = await TestSocket.open(`${base}/threads/${threadId}/events`, { authorization: apiKey });
    events.send({ type: "ping" });
    assert.deepEqual(await events.next((event) => event.type === "pong"), { type: "pong" });
    for (let i = 0; i < 30; i++) events.send({ type: "ping" });
    assert.deepEqual(await events.waitClosed(), { code: 1008, reason: "too many messages" });
  });

  test("the socket needs a credential for the thread, in the Authorization header or the token parameter, and an upgrade", async () => {
    const { apiKey } = await h().organization();
    const other = await h().organization();
    const threadId = await h().thread(apiKey);
    const otherThread = await h().thread(apiKey);
    const token = await h().threadToken(apiKey, threadId);
    await assert.rejects(TestSocket.open(`${base}/threads/${threadId}/events`), {
      status: 422,
      body: JSON.stringify({ detail: [{ type: "missing", loc: ["header", "authorization"], msg: "Field required", input: null }] }),
    });
    await assert.rejects(TestSocket.open(`${base}/threads/${threadId}/events?token=sk_nope`), { status: 401 });
    await assert.rejects(TestSocket.open(`${base}/threads/${otherThread}/events?token=${token}`), { status: 403 });
    await assert.rejects(TestSocket.open(`${base}/threads/${threadId}/events`, { authorization: other.apiKey }), {
      status: 404,
      body: JSON.stringify({ detail: "Thread not found" }),
    });
    await assert.rejects(TestSocket.open(`${base}/threads/${threadId}/events?after=-1`, { authorization: apiKey }), { status: 422 });
    const opened = await TestSocket.open(`${base}/threads/${threadId}/events?token=${token}`);
    opened.close();
    const plain = await h().request({ method: "GET", url: `/threads/${threadId}/events`, headers: { authorization: apiKey } });
    assert.deepEqual([plain.status, plain.json()], [404, { detail: "Not Found" }]);
  });

  test("a message.created event refers to its message, and reads as the copy stored before migration 012 did, byte for byte", async () => {
    const { apiKey } = await h().organization();
    const threadId = await h().thread(apiKey);
    await chat(apiKey, threadId, "Naïve \"quotes\" and emoji 🙂 on Friday?");
    const db = h().database.db;
    const stored = await db.query<{ seq: number; message_seq: number | null; payload: unknown }>(
      "SELECT seq, message_seq, payload FROM thread_events WHERE thread_id = $1 ORDER BY seq",
      [threadId],
    );
    assert.deepEqual(stored.map((row) => [row.message_seq, row.payload]), [[1, null], [2, null]]);
    const store = new EventsStore(db);
    const referenced = JSON.stringify(await store.after(threadId, 0, 10));
    // The rows as the turn functions wrote them before migration 012: the message copied into the payload.
    await db.query(
      `UPDATE thread_events e SET message_seq = NULL, payload = jsonb_build_object('message', jsonb_build_object(
         'message_id', m.id, 'role', m.role, 'message', m.content, 'conversation_id', m.conversation_id))
         FROM messages m WHERE e.thread_id = $1 AND m.thread_id = e.thread_id AND m.seq = e.message_seq`,
      [threadId],
    );
    assert.equal(JSON.stringify(await store.after(threadId, 0, 10)), referenced);
    const events = await TestSocket.open(`${base}/threads/${threadId}/events?after=0`, { authorization: apiKey });
    const user = await events.next(() => true);
    assert.equal((user.message as { message: string }).message, "Naïve \"quotes\" and emoji 🙂 on Friday?");
    events.close();
  });

  test("a call's utterance event carries its call_id; an event whose message was deleted by hand reads with a null message", async () => {
    const { apiKey } = await h().organization();
    const threadId = await h().thread(apiKey);
    await chat(apiKey, threadId, "hello");
    const db = h().database.db;
    await db.query("UPDATE thread_events SET payload = '{\"call_id\": \"call-1\"}' WHERE thread_id = $1 AND seq = 1", [threadId]);
    await db.query("DELETE FROM messages WHERE thread_id = $1 AND seq = 2", [threadId]);
    const [first, second] = await new EventsStore(db).after(threadId, 0, 10);
    assert.deepEqual({ ...(first!.payload.message as object), message_id: "-" }, { message_id: "-", role: "user", message: "hello", conversation_id: 1, call_id: "call-1" });
    assert.deepEqual(second, { seq: 2, type: "message.created", payload: { message: null } });
  });

  test("events older than the retention are deleted, newer ones and the numbering stay", async () => {
    const { apiKey } = await h().organization();
    const threadId = await h().thread(apiKey);
    await chat(apiKey, threadId, "What are your opening hours?");
    await chat(apiKey, threadId, "And on Sunday?");
    const db = h().database.db;
    await db.query("UPDATE thread_events SET created_at = now() - interval '200 hours' WHERE thread_id = $1 AND seq <= 2", [threadId]);
    const events = new EventsService(db, new EventsStore(db), pino({ level: "silent" }), 168);
    assert.ok((await events.prune()) >= 2);
    const left = await db.query<{ seq: number }>("SELECT seq FROM thread_events WHERE thread_id = $1 ORDER BY seq", [threadId]);
    assert.deepEqual(left.map((row) => row.seq), [3, 4]);
    await chat(apiKey, threadId, "thanks");
    const after = await db.query<{ seq: number }>("SELECT seq FROM thread_events WHERE thread_id = $1 ORDER BY seq", [threadId]);
    assert.deepEqual(after.map((row) => row.seq), [3, 4, 5, 6]);
  });
}, voiceSuite());
