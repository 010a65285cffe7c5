import assert from "node:assert/strict";
import { before, test } from "node:test";
import { decodeWav } from "../../src/providers/speech/audio.js";
import { listen, TestSocket, voiceSuite, waitForCall } from "./support.js";
import { forEachDatabase } from "../support/harness.js";

forEachDatabase("web calls", (h) => {
  let base = "";
  before(async () => {
    base = await listen(h().app);
  });

  async function queueWebCall(credential: string, threadId: string, projectId: string) {
    return h().request({ method: "POST", url: `/voice/${threadId}/web-call`, headers: { authorization: credential }, payload: { project_id: projectId } });
  }

  test("a web call's token arrives on the events socket, and the client holds a conversation over the call's socket", async () => {
    const { apiKey, projectId } = await h().organization();
    const threadId = await h().thread(apiKey);
    const token = await h().threadToken(apiKey, threadId);
    const events = await TestSocket.open(`${base}/threads/${threadId}/events?token=${token}`);
    const queued = await queueWebCall(`Bearer ${token}`, threadId, projectId);
    assert.equal(queued.status, 200);
    assert.equal(queued.json<{ status: string }>().status, "queued");
    assert.equal(typeof queued.json<{ message: string }>().message, "string");

    const ready = await events.next((event) => event.type === "web_call.ready");
    assert.equal(typeof ready.call_id, "string");
    assert.equal(typeof ready.access_token, "string");
    assert.equal(typeof ready.seq, "number");
    const callId = String(ready.call_id);

    const call = await TestSocket.open(`${base}/calls/${callId}/ws?token=${String(ready.access_token)}&audio=true`);
    assert.deepEqual(await call.next((m) => m.type === "call.started"), { type: "call.started", call_id: callId });
    call.send({ type: "user_message", text: "What are your opening hours?" });
    const reply = await call.next((m) => m.type === "agent_message");
    assert.deepEqual(reply, { type: "agent_message", turn: 1, text: "We are open from 9 to 5 on weekdays." });
    const deltas = call.received.filter((m) => m.type === "agent_delta" && m.turn === 1).map((m) => String(m.text));
    assert.equal(deltas.join(""), reply.text);
    const audio = await call.next((m) => m.type === "agent_audio");
    assert.equal(audio.format, "wav");
    assert.ok(decodeWav(Buffer.from(String(audio.data), "base64")).samples.length > 0);

    call.send({ type: "nonsense" });
    assert.equal((await call.next((m) => m.type === "error")).detail, 'type must be "text", "user_message" or "hangup"');
    call.send({ type: "user_message", text: "Where is the office located?" });
    assert.equal((await call.next((m) => m.type === "agent_message")).text, "Our office is at 1 Main Street.");
    call.send({ type: "hangup" });
    assert.deepEqual(await call.next((m) => m.type === "call.ended"), { type: "call.ended", reason: "user_hangup" });
    assert.equal((await call.waitClosed()).code, 1000);

    const done = await waitForCall(h().request, apiKey, callId, (c) => c.status === "ended");
    assert.equal(done.call_type, "web_call");
    assert.equal(done.disconnection_reason, "user_hangup");
    assert.equal(done.direction, null);
    assert.equal(
      done.transcript,
      "User: What are your opening hours?\nAgent: We are open from 9 to 5 on weekdays.\nUser: Where is the office located?\nAgent: Our office is at 1 Main Street.",
    );
    const ended = await events.next((event) => event.type === "call.updated" && (event.call as { status: string }).status === "ended");
    assert.equal((ended.call as { disconnection_reason: string }).disconnection_reason, "user_hangup");
    const created = events.received.filter((event) => event.type === "message.created");
    assert.deepEqual(
      created.map((event) => (event.message as { role: string }).role),
      ["user", "assistant", "user", "assistant"],
    );
    events.close();
  });

  test("a client that never joins ends the call as error_user_not_joined, and a late join is refused", async () => {
    const { apiKey, projectId } = await h().organization();
    const threadId = await h().thread(apiKey);
    const events = await TestSocket.open(`${base}/threads/${threadId}/events`, { authorization: apiKey });
    await queueWebCall(apiKey, threadId, projectId);
    const ready = await events.next((event) => event.type === "web_call.ready");
    const failed = await events.next((event) => event.type === "call.updated" && (event.call as { status: string }).status === "error");
    assert.equal((failed.call as { disconnection_reason: string }).disconnection_reason, "error_user_not_joined");
    await assert.rejects(TestSocket.open(`${base}/calls/${String(ready.call_id)}/ws?token=${String(ready.access_token)}`), {
      status: 403,
      body: JSON.stringify({ detail: "Invalid or expired call token" }),
    });
    events.close();
  });

  test("a web call's socket refuses a wrong token and a missing one", async () => {
    const { apiKey, projectId } = await h().organization();
    const threadId = await h().thread(apiKey);
    const events = await TestSocket.open(`${base}/threads/${threadId}/events`, { authorization: apiKey });
    await queueWebCall(apiKey, threadId, projectId);
    const ready = await events.next((event) => event.type === "web_call.ready");
    await assert.rejects(TestSocket.open(`${base}/calls/${String(ready.call_id)}/ws?token=wrong`), { status: 403 });
    await assert.rejects(TestSocket.open(`${base}/calls/${String(ready.call_id)}/ws`), {
      status: 422,
      body: JSON.stringify({ detail: [{ type: "missing", loc: ["query", "token"], msg: "Field required", input: null }] }),
    });
    await assert.rejects(TestSocket.open(`${base}/calls/not-a-call/ws?token=x`), { status: 404 });
    events.close();
  });

  test("a client that disconnects without hanging up ends the call as user_hangup", async () => {
    const { apiKey, projectId } = await h().organization();
    const threadId = await h().thread(apiKey);
    const events = await TestSocket.open(`${base}/threads/${threadId}/events`, { authorization: apiKey });
    await queueWebCall(apiKey, threadId, projectId);
    const ready = await events.next((event) => event.type === "web_call.ready");
    const call = await TestSocket.open(`${base}/calls/${String(ready.call_id)}/ws?token=${String(ready.access_token)}`);
    await call.next((m) => m.type === "call.started");
    call.close();
    const done = await waitForCall(h().request, apiKey, String(ready.call_id), (c) => c.status === "ended");
    assert.equal(done.disconnection_reason, "user_hangup");
    events.close();
  });

  test("a web call needs a project of the caller's organization", async () => {
    const { apiKey } = await h().organization();
    const other = await h().organization();
    const threadId = await h().thread(apiKey);
    assert.deepEqual((await queueWebCall(apiKey, threadId, other.projectId)).json(), { detail: "Project not found" });
    const token = await h().threadToken(apiKey, threadId);
    const otherThread = await h().thread(apiKey);
    assert.equal((await queueWebCall(token, otherThread, other.projectId)).status, 403);
  });
}, voiceSuite());
