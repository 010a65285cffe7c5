import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import net from "node:net";
import { after, before, test } from "node:test";
import pino from "pino";
import { createApp, type App } from "../../src/app.js";
import { EventsService } from "../../src/domain/events/events-service.js";
import { EventsStore } from "../../src/store/events-store.js";
import { forEachDatabase, testConfig } from "../support/harness.js";
import { errorLevel, LogLines, warnLevel } from "../support/log-lines.js";
import { listen, testVoiceSettings, TestSocket, voiceSuite, waitForCall } from "./support.js";

/**
 * Opens a WebSocket by hand and writes, in the same packet as the upgrade request, a masked text frame of `bytes`
 * and then a close frame (1000); resolves with the code of the server's close frame. The frame is there before the
 * route could check anything (a token, a call id), so this is how a client that has not authenticated is treated.
 */
function closeCodeAfterFrame(base: string, path: string, bytes: number, headers: Record<string, string> = {}): Promise<number> {
  const { hostname, port } = new URL(base);
  const request = [
    `GET ${path} HTTP/1.1`,
    `Host: ${hostname}:${port}`,
    "Connection: Upgrade",
    "Upgrade: websocket",
    "Sec-WebSocket-Version: 13",
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==",
    ...Object.entries(headers).map(([name, value]) => `${name}: ${value}`),
    "",
    "",
  ].join("\r\n");
  const length = Buffer.alloc(8);
  length.writeBigUInt64BE(BigInt(bytes));
  // A zero masking key leaves the payload as it is; a client's frames must be masked, with any key.
  const frame = Buffer.concat([Buffer.from([0x81, 0x80 | 127]), length, Buffer.alloc(4), Buffer.alloc(bytes, "a")]);
  const close = Buffer.from([0x88, 0x80 | 2, 0, 0, 0, 0, 0x03, 0xe8]);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    let received = Buffer.alloc(0);
    const settle = (outcome: () => void) => {
      socket.destroy();
      outcome();
    };
    socket.on("data", (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const headEnd = received.indexOf("\r\n\r\n");
      if (headEnd < 0) return;
      const status = received.subarray(0, headEnd).toString().split(" ")[1];
      if (status !== "101") return settle(() => reject(new Error(`upgrade refused: ${received.toString()}`)));
      let offset = headEnd + 4;
      while (received.length >= offset + 2) {
        const opcode = received[offset]! & 0x0f;
        let size = received[offset + 1]! & 0x7f;
        let start = offset + 2;
        if (size === 126) [size, start] = [received.length >= start + 2 ? received.readUInt16BE(start) : Infinity, start + 2];
        else if (size === 127) [size, start] = [received.length >= start + 8 ? Number(received.readBigUInt64BE(start)) : Infinity, start + 8];
        if (received.length < start + size) return;
        if (opcode === 0x8) return settle(() => resolve(size >= 2 ? received.readUInt16BE(start) : 1005));
        offset = start + size;
      }
    });
    socket.on("error", (error) => settle(() => reject(error)));
    socket.on("close", () => resolve(1006));
    socket.write(Buffer.concat([Buffer.from(request), frame, close]));
  });
}

forEachDatabase("hostile frames and parameters on the WebSockets", (h) => {
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
    // Placed through this suite's app, so that the call's join window is this app's, not the shared one's 300 ms.
    const queued = await app.server.inject({ method: "POST", url: `/voice/${threadId}/web-call`, headers: { authorization: apiKey }, payload: { project_id: projectId } });
    assert.equal(queued.statusCode, 200);
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

  test("every socket refuses a frame over 64 KiB with 1008 before anything is authenticated, logged at warn", async () => {
    const { apiKey, projectId } = await h().organization();
    const threadId = await h().thread(apiKey);
    const events = await TestSocket.open(`${base}/threads/${threadId}/events`, { authorization: apiKey });
    // Placed through this suite's app, so that the call's join window is this app's, not the shared one's 300 ms.
    const queued = await app.server.inject({ method: "POST", url: `/voice/${threadId}/web-call`, headers: { authorization: apiKey }, payload: { project_id: projectId } });
    assert.equal(queued.statusCode, 200, queued.body);
    const ready = await events.next((event) => event.type === "web_call.ready");
    events.close();
    const sockets: [string, Record<string, string>][] = [
      [`/threads/${threadId}/events`, { authorization: apiKey }],
      [`/calls/${String(ready.call_id)}/ws?token=${String(ready.access_token)}`, {}],
      [`/voice/twilio/media/${randomUUID()}`, {}],
      [`/voice/retell/llm/${randomUUID()}`, {}],
    ];
    for (const [path, headers] of sockets) {
      const before = logged.lines.length;
      assert.equal(await closeCodeAfterFrame(base, path, 64 * 1024 + 1, headers), 1008, path);
      assert.deepEqual(logged.since(before, errorLevel), [], `${path}: nothing at error level`);
      assert.ok(
        logged.since(before, warnLevel).some((line) => line.msg === "a WebSocket client broke the protocol"),
        `${path}: the refusal is logged at warn`,
      );
    }
  });

  test("a WebSocket upgrade, accepted or refused, logs nothing at warn or above", async () => {
    const { apiKey } = await h().organization();
    const threadId = await h().thread(apiKey);
    const before = logged.lines.length;
    const events = await TestSocket.open(`${base}/threads/${threadId}/events`, { authorization: apiKey });
    events.send({ type: "ping" });
    assert.equal((await events.next((message) => message.type === "pong")).type, "pong");
    events.close();
    await events.waitClosed();
    await assert.rejects(TestSocket.open(`${base}/threads/${randomUUID()}/events`, { authorization: apiKey }), { status: 404 });
    await assert.rejects(TestSocket.open(`${base}/threads/${threadId}/events`), { status: 422 });
    assert.deepEqual(logged.since(before, warnLevel), []);
  });
}, voiceSuite());
