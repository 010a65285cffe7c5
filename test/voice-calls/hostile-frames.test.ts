import assert from "node:assert/strict";
import { Writable } from "node:stream";
import { after, before, test } from "node:test";
import pino from "pino";
import { createApp, type App } from "../../src/app.js";
import { EventsService } from "../../src/domain/events/events-service.js";
import { EventsStore } from "../../src/store/events-store.js";
import { testConfig } from "../support/harness.js";
import { forEachVoiceDatabase, listen, testVoiceSettings, TestSocket, waitForCall } from "./support.js";

/** Log lines at warn and above, as pino writes them, for tests that check how a client's fault is logged. */
class LogLines extends Writable {
  readonly lines: { level: number; msg: string }[] = [];
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    for (const line of chunk.toString().split("\n").filter((text) => text !== "")) this.lines.push(JSON.parse(line) as { level: number; msg: string });
    done();
  }
}

forEachVoiceDatabase("hostile frames and parameters on the WebSockets", (h) => {
  let base = "";
  let logged: LogLines;
  let app: App;
  before(async () => {
    logged = new LogLines();
    // A join window long enough for a loaded machine: these tests are about what happens once the client is in.
    app = await createApp(testConfig(h().database), { db: h().database.db, logger: pino({ level: "warn" }, logged), voice: { ...testVoiceSettings, webCallJoinTimeoutMs: 15_000 } });
    await app.server.ready();
    base = await listen(app);
  });
  after(() => app.close());

  async function joinedCall() {
    const { apiKey, projectId } = await h().organization();
    const threadId = await h().thread(apiKey);
    const events = await TestSocket.open(`${base}/threads/${threadId}/events`, { authorization: apiKey });
    const queued = await h().request({ method: "POST", url: `/voice/${threadId}/web-call`, headers: { authorization: apiKey }, payload: { project_id: projectId } });
    assert.equal(queued.status, 200);
    const ready = await events.next((event) => event.type === "web_call.ready");
    events.close();
    const callId = String(ready.call_id);
    const call = await TestSocket.open(`${base}/calls/${callId}/ws?token=${String(ready.access_token)}`);
    await call.next((m) => m.type === "call.started");
    return { apiKey, callId, call };
  }

  test("a NUL character in a web-call turn is refused with an error frame, and the call goes on", async () => {
    const { apiKey, callId, call } = await joinedCall();
    call.send({ type: "user_message", text: "a\u0000b" });
    assert.equal((await call.next((m) => m.type === "error")).detail, "Text must not contain NUL (U+0000) characters");
    call.send({ type: "user_message", text: "What are your opening hours?" });
    assert.equal((await call.next((m) => m.type === "agent_message")).text, "We are open from 9 to 5 on weekdays.");
    call.send({ type: "hangup" });
    assert.equal((await call.waitClosed()).code, 1000);
    const done = await waitForCall(h().request, apiKey, callId, (c) => c.status === "ended" || c.status === "error");
    assert.equal(done.disconnection_reason, "user_hangup");
    assert.equal(done.transcript, "User: What are your opening hours?\nAgent: We are open from 9 to 5 on weekdays.");
  });

  test("a call-socket frame over 64 KiB closes the socket with 1008, logged as the client's fault at warn", async () => {
    const { call } = await joinedCall();
    const before = logged.lines.length;
    call.socket.send(JSON.stringify({ type: "user_message", text: "x".repeat(70_000) }));
    const closed = await call.waitClosed();
    assert.equal(closed.code, 1008);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const lines = logged.lines.slice(before);
    assert.ok(lines.length > 0, "the refusal is logged");
    assert.deepEqual(lines.filter((line) => line.level >= 50), [], "nothing is logged at error level");
  });

  test("?after= outside the range of a sequence number is refused before the upgrade, like -1 and abc", async () => {
    const { apiKey } = await h().organization();
    const threadId = await h().thread(apiKey);
    for (const after of ["-1", "abc", "9007199254740992", "9223372036854775807", "99999999999999999999999"]) {
      const refused = await TestSocket.open(`${base}/threads/${threadId}/events?after=${after}`, { authorization: apiKey }).then(
        (socket) => {
          socket.close();
          return undefined;
        },
        (error: { status: number; body: string }) => error,
      );
      assert.equal(refused?.status, 422, `after=${after}`);
      assert.deepEqual((JSON.parse(refused.body) as { detail: { loc: string[] }[] }).detail[0]?.loc, ["query", "after"]);
    }
    const largest = await TestSocket.open(`${base}/threads/${threadId}/events?after=9007199254740991`, { authorization: apiKey });
    largest.close();
  });

  test("a subscription whose read fails reports it, so that its socket closes rather than lingering mute", { timeout: 10_000 }, async () => {
    const { apiKey } = await h().organization();
    const threadId = await h().thread(apiKey);
    const events = new EventsService(h().database.db, new EventsStore(h().database.db), pino({ level: "silent" }), 0);
    await events.start();
    try {
      // 2^63 is past PostgreSQL's bigint: the database itself refuses the read.
      const failure = await new Promise<unknown>((resolve) => {
        void events.subscribe(threadId, 2 ** 63, () => assert.fail("nothing to deliver"), resolve);
      });
      assert.ok(failure instanceof Error);
    } finally {
      await events.stop();
    }
  });

  test("a path id over 100 characters reaches the WebSocket routes, and one over 200 is a 422", async () => {
    const { apiKey } = await h().organization();
    await assert.rejects(TestSocket.open(`${base}/threads/${"a".repeat(150)}/events`, { authorization: apiKey }), {
      status: 404,
      body: JSON.stringify({ detail: "Thread not found" }),
    });
    const long = await TestSocket.open(`${base}/threads/${"a".repeat(201)}/events`, { authorization: apiKey }).catch((error: { status: number; body: string }) => error);
    assert.ok(!(long instanceof TestSocket));
    assert.equal(long.status, 422);
    assert.deepEqual((JSON.parse(long.body) as { detail: { type: string; loc: string[] }[] }).detail[0], {
      type: "string_too_long",
      loc: ["path", "thread_id"],
      msg: "String should have at most 200 characters",
      input: "a".repeat(201),
      ctx: { max_length: 200 },
    });
    await assert.rejects(TestSocket.open(`${base}/calls/${"c".repeat(150)}/ws?token=x`), { status: 404 });
    await assert.rejects(TestSocket.open(`${base}/calls/${"c".repeat(201)}/ws?token=x`), { status: 422 });
  });
});
