import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { acmeAgent } from "../../support/fixtures.js";
import { startFakeOpenAi, type FakeLlmServer } from "../../support/fake-llm-servers.js";
import { pollUntil } from "../../support/polling.js";
import { accountId, sleep, TestSocket, waitForCall, type CallDetail } from "../../voice-calls/support.js";
import { RetellLlmClient, signedWebhook, startFakeRetell, type FakeRetell } from "./fake-retell.js";
import { forEachDatabase, type Harness } from "../../support/harness.js";
import { telephonySuite } from "./support.js";

const retellKey = "key_0123456789abcdef0123456789abcdef";
const agentId = "agent_b3f2c9d1e0a4";

function retellConfig(retell: FakeRetell, agent: Record<string, unknown> = acmeAgent) {
  return {
    agent: {
      ...agent,
      knowledge: [...acmeAgent.knowledge, { question: "Bye, thanks, that is all", answer: "Thanks for calling Acme. Goodbye!" }],
    },
    pricing: { voice_minute_usd: 0.06 },
    voice: {
      provider: "retell",
      accounts: [{ id: accountId, phone_numbers: ["+14155550100"] }],
      retell: { api_key: retellKey, agent_id: agentId, api_base_url: retell.url },
    },
  };
}

forEachDatabase("Retell voice provider", (harness: () => Harness) => {
  let retell: FakeRetell;
  before(async () => {
    retell = await startFakeRetell(retellKey);
  });
  after(async () => {
    await retell.close();
  });

  async function setUp(agent?: Record<string, unknown>, voice: Record<string, unknown> = {}) {
    const h = harness();
    const config = retellConfig(retell, agent);
    const org = await h.organization({ ...config, voice: { ...config.voice, ...voice } });
    const threadId = await h.thread(org.apiKey);
    return { h, ...org, threadId };
  }

  async function placeCall(h: Harness, apiKey: string, threadId: string, projectId: string) {
    const before = retell.callIds.length;
    const response = await h.request({
      method: "POST",
      url: `/voice/${threadId}/phone-call`,
      headers: { authorization: apiKey },
      payload: { callee: "+1 415 555 2671", project_id: projectId },
    });
    assert.equal(response.status, 200, response.body);
    const call = response.json<{ id: string; status: string }>();
    assert.equal(call.status, "queued");
    assert.equal(retell.callIds.length, before + 1);
    return { callId: call.id, retellId: retell.callIds.at(-1)! };
  }

  async function webhook(h: Harness, event: string, call: Record<string, unknown>, key = retellKey) {
    const { body, signature } = await signedWebhook(key, event, call);
    return h.request({ method: "POST", url: "/voice/retell/webhook", headers: { "content-type": "application/json", "x-retell-signature": signature }, payload: body });
  }

  test("a whole phone call: created at Retell, answered over the Custom LLM socket, updated by signed webhooks", async () => {
    const { h, apiKey, projectId, threadId } = await setUp();
    const events = await TestSocket.open(`${h.wsBase}/threads/${threadId}/events`, { authorization: apiKey });
    const { callId, retellId } = await placeCall(h, apiKey, threadId, projectId);

    const created = retell.requests.at(-1)!;
    assert.equal(created.path, "/v2/create-phone-call");
    assert.equal(created.headers.authorization, `Bearer ${retellKey}`);
    assert.deepEqual(created.json, { from_number: "+14155550100", to_number: "+14155552671", override_agent_id: agentId, metadata: { parley_call_id: callId } });

    const start = Date.now();
    assert.equal((await webhook(h, "call_started", { call_id: retellId, call_status: "ongoing", start_timestamp: start, metadata: { parley_call_id: callId } })).status, 204);
    await events.next((event) => event["type"] === "call.updated" && (event["call"] as CallDetail).status === "ongoing");

    const llm = await RetellLlmClient.connect(h.wsBase, retellId);
    const opening = await llm.until((frames) => (frames.length >= 2 ? frames.slice(0, 2) : undefined));
    assert.deepEqual(opening[0], { response_type: "config", config: { auto_reconnect: true, call_details: true } });
    assert.deepEqual(opening[1], { response_type: "response", response_id: 0, content: "", content_complete: true, end_call: false });
    llm.send({ interaction_type: "call_details", call: { call_id: retellId, agent_id: agentId } });
    llm.send({ interaction_type: "ping_pong", timestamp: 1234 });
    await llm.until((frames) => frames.find((frame) => frame.response_type === "ping_pong" && frame.timestamp === 1234));
    llm.send({ interaction_type: "update_only", transcript: [{ role: "user", content: "What are your" }] });
    llm.send({ interaction_type: "response_required", response_id: 1, transcript: [{ role: "user", content: "What are your opening hours?" }] });
    const first = await llm.response(1);
    assert.equal(first.text, "We are open from 9 to 5 on weekdays.");
    assert.ok(first.frames.length > 2, "the reply is streamed in several frames");
    assert.equal(first.endCall, false);

    llm.send({
      interaction_type: "response_required",
      response_id: 2,
      transcript: [
        { role: "user", content: "What are your opening hours?" },
        { role: "agent", content: "We are open from 9 to 5 on weekdays." },
        { role: "user", content: "Bye, thanks, that is all." },
      ],
    });
    const last = await llm.response(2);
    assert.equal(last.text, "Thanks for calling Acme. Goodbye!");
    assert.equal(last.endCall, true, "a farewell asks Retell to hang up");

    const end = start + 8_400;
    const ended = await webhook(h, "call_ended", {
      call_id: retellId,
      call_status: "ended",
      start_timestamp: start,
      end_timestamp: end,
      disconnection_reason: "agent_hangup",
      recording_url: "https://retell-recordings.example/rec.wav",
      metadata: { parley_call_id: callId },
      transcript: "User: What are your opening hours?\nAgent: We are open from 9 to 5 on weekdays.\nUser: Bye, thanks, that is all.\nAgent: Thanks for calling Acme. Goodbye!\nUser: Bye!",
      transcript_object: [
        { role: "user", content: "What are your opening hours?", words: [{ word: "What", start: 0.5, end: 0.7 }, { word: " are", start: 0.7, end: 0.8, confidence: 0.9 }] },
        { role: "agent", content: "We are open from 9 to 5 on weekdays.", words: [{ word: "We", start: 2.1, end: 2.2 }] },
        { role: "user", content: "Bye, thanks, that is all.", words: [] },
        { role: "agent", content: "Thanks for calling Acme. Goodbye!", words: [] },
        { role: "user", content: "Bye!", words: [{ word: "Bye!", start: 7.9, end: 8.1 }] },
      ],
    });
    assert.equal(ended.status, 204);
    await llm.waitClosed().catch(() => undefined);

    const call = await waitForCall(h.request, apiKey, callId, (detail) => detail.status === "ended");
    assert.equal(call.disconnection_reason, "agent_hangup");
    assert.equal(call.duration_ms, 8_400);
    assert.equal(call.start_timestamp, Math.floor(start / 1000));
    assert.equal(call.recording_url, "https://retell-recordings.example/rec.wav");
    assert.deepEqual(call.transcript_object?.[0], { role: "user", content: "What are your opening hours?", words: [{ word: "What", start: 0.5, end: 0.7 }, { word: "are", start: 0.7, end: 0.8 }] });
    assert.equal(call.transcript_object?.length, 5);
    assert.equal(
      call.transcript,
      "User: What are your opening hours?\nAgent: We are open from 9 to 5 on weekdays.\nUser: Bye, thanks, that is all.\nAgent: Thanks for calling Acme. Goodbye!\nUser: Bye!",
      "the thread's history holds the call, the caller's last words taken from Retell's final transcript",
    );
    assert.equal(call.call_analysis, null);

    const analyzed = await webhook(h, "call_analyzed", {
      call_id: retellId,
      call_status: "ended",
      metadata: { parley_call_id: callId },
      call_analysis: { call_summary: "The caller asked about opening hours.", user_sentiment: "Positive", call_successful: true, in_voicemail: false, custom_analysis_data: { asked_about_hours: true } },
    });
    assert.equal(analyzed.status, 204);
    const withAnalysis = await waitForCall(h.request, apiKey, callId, (detail) => detail.call_analysis !== null);
    assert.deepEqual(withAnalysis.call_analysis, {
      call_summary: "The caller asked about opening hours.",
      user_sentiment: "Positive",
      call_successful: true,
      custom_analysis_data: { asked_about_hours: true },
    });
    await events.next((event) => event["type"] === "call.updated" && (event["call"] as CallDetail).status === "ended");
    await events.next((event) => event["type"] === "message.created");

    const thread = (await h.request({ method: "GET", url: `/threads/${threadId}`, headers: { authorization: apiKey } })).json<{ usage: { voice_minutes: number; voice_cost: number } }>();
    assert.equal(thread.usage.voice_minutes, 0.14);
    events.close();
  });

  test("a webhook with a bad signature, no signature, or another key's signature is refused with 401 and changes nothing", async () => {
    const { h, apiKey, projectId, threadId } = await setUp();
    const { callId, retellId } = await placeCall(h, apiKey, threadId, projectId);
    const call = { call_id: retellId, call_status: "ongoing", start_timestamp: Date.now(), metadata: { parley_call_id: callId } };
    const { body, signature } = await signedWebhook(retellKey, "call_started", call);
    const tampered = body.replace("ongoing", "ended");
    for (const headers of [{ "x-retell-signature": signature }, {}, { "x-retell-signature": "v=1,d=00" }]) {
      const response = await h.request({ method: "POST", url: "/voice/retell/webhook", headers: { "content-type": "application/json", ...headers }, payload: headers["x-retell-signature"] === signature ? tampered : body });
      assert.equal(response.status, 401, response.body);
      assert.deepEqual(response.json(), { detail: "Invalid signature" });
    }
    assert.equal((await webhook(h, "call_started", call, "key_of_someone_else_0123456789")).status, 401);
    const stale = JSON.stringify({ event: "call_started", call });
    const old = await h.request({ method: "POST", url: "/voice/retell/webhook", headers: { "content-type": "application/json", "x-retell-signature": `v=${Date.now() - 10 * 60_000},d=${"0".repeat(64)}` }, payload: stale });
    assert.equal(old.status, 401);
    const unknown = await webhook(h, "call_started", { call_id: "call_unknown", call_status: "ongoing" });
    assert.equal(unknown.status, 401, "a call Parley does not know cannot be authenticated");
    const detail = (await h.request({ method: "GET", url: `/calls/${callId}`, headers: { authorization: apiKey } })).json<CallDetail>();
    assert.equal(detail.status, "queued");
  });

  test("the Custom LLM socket closes an unknown call id with 4404", async () => {
    const { h } = await setUp();
    const llm = await RetellLlmClient.connect(h.wsBase, "call_0000000000000000deadbeef00000000");
    const closed = await llm.waitClosed();
    assert.equal(closed.code, 4404);
    assert.equal(llm.frames.length, 0);
  });

  test("a webhook delivered twice changes nothing the second time", async () => {
    const { h, apiKey, projectId, threadId } = await setUp();
    const { callId, retellId } = await placeCall(h, apiKey, threadId, projectId);
    const start = Date.now();
    await webhook(h, "call_started", { call_id: retellId, call_status: "ongoing", start_timestamp: start });
    const { body, signature } = await signedWebhook(retellKey, "call_ended", {
      call_id: retellId,
      call_status: "ended",
      start_timestamp: start,
      end_timestamp: start + 3000,
      disconnection_reason: "user_hangup",
      transcript_object: [{ role: "user", content: "Hello?", words: [] }],
    });
    const send = () => h.request({ method: "POST", url: "/voice/retell/webhook", headers: { "content-type": "application/json", "x-retell-signature": signature }, payload: body });
    assert.equal((await send()).status, 204);
    const first = await waitForCall(h.request, apiKey, callId, (detail) => detail.status === "ended");
    const eventsAfterFirst = await h.app.db.query<{ n: number }>("SELECT count(*)::int AS n FROM thread_events WHERE thread_id = $1", [threadId]);
    assert.equal((await send()).status, 204);
    const second = (await h.request({ method: "GET", url: `/calls/${callId}`, headers: { authorization: apiKey } })).json<CallDetail>();
    assert.deepEqual(second, { ...first, recording_url: second.recording_url });
    const eventsAfterSecond = await h.app.db.query<{ n: number }>("SELECT count(*)::int AS n FROM thread_events WHERE thread_id = $1", [threadId]);
    assert.equal(eventsAfterSecond[0]?.n, eventsAfterFirst[0]?.n);
    const thread = (await h.request({ method: "GET", url: `/threads/${threadId}`, headers: { authorization: apiKey } })).json<{ usage: { voice_minutes: number } }>();
    assert.equal(thread.usage.voice_minutes, 0.05, "billed once");
  });

  test("Retell answering 500 at creation: the call is error with the reason, the request 502, and the thread keeps working", async () => {
    const { h, apiKey, projectId, threadId } = await setUp();
    retell.behave({ kind: "status", status: 500 });
    try {
      const response = await h.request({ method: "POST", url: `/voice/${threadId}/phone-call`, headers: { authorization: apiKey }, payload: { callee: "+14155552671", project_id: projectId } });
      assert.equal(response.status, 502);
      assert.deepEqual(response.json(), { detail: "Voice provider failed: Retell answered 500: Internal server error, please retry." });
    } finally {
      retell.behave({ kind: "ok" });
    }
    const calls = (await h.request({ method: "GET", url: `/calls?thread_id=${threadId}`, headers: { authorization: apiKey } })).json<{ calls: CallDetail[] }>();
    assert.equal(calls.calls[0]?.status, "error");
    assert.equal(calls.calls[0]?.disconnection_reason, "error_provider");
    const chat = await h.request({ method: "POST", url: "/chat", headers: { authorization: apiKey }, payload: { thread_id: threadId, message: "What are your opening hours?", service_config_name: "support" } });
    assert.equal(chat.status, 200);
    await placeCall(h, apiKey, threadId, projectId);
  });

  test("Retell hanging at creation: the call ends as error once the vendor timeout passes", async () => {
    const { h, apiKey, projectId, threadId } = await setUp();
    retell.behave({ kind: "hang" });
    try {
      const response = await h.request({ method: "POST", url: `/voice/${threadId}/phone-call`, headers: { authorization: apiKey }, payload: { callee: "+14155552671", project_id: projectId } });
      assert.equal(response.status, 502);
      assert.deepEqual(response.json(), { detail: "Voice provider failed: Retell did not answer within 1.5 s" });
    } finally {
      retell.behave({ kind: "ok" });
    }
    const calls = (await h.request({ method: "GET", url: `/calls?thread_id=${threadId}`, headers: { authorization: apiKey } })).json<{ calls: CallDetail[] }>();
    assert.equal(calls.calls[0]?.status, "error");
    await placeCall(h, apiKey, threadId, projectId);
  });

  test("a stale response_id is dropped: only the newest request is answered", async () => {
    const model: FakeLlmServer = await startFakeOpenAi({ chunks: ["One ", "two ", "three ", "four ", "five."], chunkDelayMs: 60 });
    try {
      const { h, apiKey, projectId, threadId } = await setUp({ provider: "openai", base_url: model.url, model: "fake", api_key: "sk-fake" });
      const { retellId } = await placeCall(h, apiKey, threadId, projectId);
      const llm = await RetellLlmClient.connect(h.wsBase, retellId);
      llm.send({ interaction_type: "response_required", response_id: 1, transcript: [{ role: "user", content: "Count for me." }] });
      await llm.until((frames) => frames.find((frame) => frame.response_id === 1 && frame.content !== ""));
      llm.send({ interaction_type: "response_required", response_id: 2, transcript: [{ role: "user", content: "Count for me. Actually, count again." }] });
      const second = await llm.response(2);
      assert.equal(second.text, "One two three four five.");
      await sleep(400);
      const firstAfterSecond = llm.frames.slice(llm.frames.findIndex((frame) => frame.response_id === 2)).filter((frame) => frame.response_id === 1);
      assert.deepEqual(firstAfterSecond, [], "nothing more of response 1 once response 2 was asked for");
      assert.ok(!llm.frames.some((frame) => frame.response_id === 1 && frame.content_complete), "response 1 is never completed");
      llm.send({ interaction_type: "response_required", response_id: 1, transcript: [{ role: "user", content: "late" }] });
      await sleep(200);
      assert.equal(llm.frames.filter((frame) => frame.response_id === 1 && frame.content === "late").length, 0);
      llm.close();
    } finally {
      await model.close();
    }
  });

  test("a model that fails still ends its turn with content_complete: true, and the call goes on", async () => {
    const model = await startFakeOpenAi([{ status: 500, errorMessage: "model down" }]);
    try {
      const { h, apiKey, projectId, threadId } = await setUp({ provider: "openai", base_url: model.url, model: "fake", api_key: "sk-fake" });
      const { callId, retellId } = await placeCall(h, apiKey, threadId, projectId);
      const llm = await RetellLlmClient.connect(h.wsBase, retellId);
      llm.send({ interaction_type: "response_required", response_id: 1, transcript: [{ role: "user", content: "Hello?" }] });
      const reply = await llm.response(1);
      assert.equal(reply.endCall, false);
      model.setBehaviour({ chunks: ["Back ", "again."] });
      llm.send({ interaction_type: "reminder_required", response_id: 2, transcript: [{ role: "user", content: "Hello?" }] });
      assert.equal((await llm.response(2)).text, "Back again.");
      const detail = (await h.request({ method: "GET", url: `/calls/${callId}`, headers: { authorization: apiKey } })).json<CallDetail>();
      assert.equal(detail.status, "ongoing");
      llm.close();
    } finally {
      await model.close();
    }
  });

  test("a socket Retell reconnects mid-call picks up where the call was: nothing is stored twice", async () => {
    const { h, apiKey, projectId, threadId } = await setUp();
    const { callId, retellId } = await placeCall(h, apiKey, threadId, projectId);
    await webhook(h, "call_started", { call_id: retellId, call_status: "ongoing", start_timestamp: Date.now() });
    const first = await RetellLlmClient.connect(h.wsBase, retellId);
    first.send({ interaction_type: "response_required", response_id: 1, transcript: [{ role: "user", content: "What are your opening hours?" }] });
    const answer = (await first.response(1)).text;
    first.close();
    const again = await RetellLlmClient.connect(h.wsBase, retellId);
    again.send({
      interaction_type: "response_required",
      response_id: 2,
      transcript: [
        { role: "user", content: "What are your opening hours?" },
        { role: "agent", content: answer },
        { role: "user", content: "Where is the office located?" },
      ],
    });
    assert.equal((await again.response(2)).text, "Our office is at 1 Main Street.");
    again.close();
    const call = (await h.request({ method: "GET", url: `/calls/${callId}`, headers: { authorization: apiKey } })).json<CallDetail>();
    assert.equal(
      call.transcript,
      "User: What are your opening hours?\nAgent: We are open from 9 to 5 on weekdays.\nUser: Where is the office located?\nAgent: Our office is at 1 Main Street.",
    );
  });

  test("Retell's socket and webhook may come before its create-phone-call answer: the call is found all the same", async () => {
    const { h, apiKey, projectId, threadId } = await setUp();
    let early: RetellLlmClient | undefined;
    let started: number | undefined;
    retell.beforeAnswer(async (retellId, body) => {
      early = await RetellLlmClient.connect(h.wsBase, retellId);
      early.send({ interaction_type: "response_required", response_id: 1, transcript: [{ role: "user", content: "What are your opening hours?" }] });
      await sleep(50);
      const parleyCallId = (body?.["metadata"] as { parley_call_id: string }).parley_call_id;
      started = (await webhook(h, "call_started", { call_id: retellId, call_status: "ongoing", start_timestamp: Date.now(), metadata: { parley_call_id: parleyCallId } })).status;
    });
    try {
      const { callId } = await placeCall(h, apiKey, threadId, projectId);
      assert.equal(started, 204, "the webhook was authenticated through the call id in its metadata");
      assert.equal((await early!.response(1)).text, "We are open from 9 to 5 on weekdays.");
      const call = (await h.request({ method: "GET", url: `/calls/${callId}`, headers: { authorization: apiKey } })).json<CallDetail>();
      assert.equal(call.status, "ongoing");
      early!.close();
    } finally {
      retell.beforeAnswer(undefined);
    }
  });

  test("at voice.max_call_seconds Parley ends the call and stops it at Retell", async () => {
    const { h, apiKey, projectId, threadId } = await setUp(undefined, { max_call_seconds: 1 });
    const { callId, retellId } = await placeCall(h, apiKey, threadId, projectId);
    const llm = await RetellLlmClient.connect(h.wsBase, retellId);
    llm.send({ interaction_type: "response_required", response_id: 1, transcript: [{ role: "user", content: "Hello?" }] });
    await llm.response(1);
    const call = await waitForCall(h.request, apiKey, callId, (detail) => detail.status === "ended", 5000);
    assert.equal(call.disconnection_reason, "max_duration_reached");
    const deadline = Date.now() + 3000;
    while (!retell.requests.some((request) => request.path === `/v2/stop-call/${retellId}`) && Date.now() < deadline) await sleep(20);
    assert.ok(retell.requests.some((request) => request.path === `/v2/stop-call/${retellId}`));
    assert.equal((await llm.waitClosed()).code, 1000, "this instance closes the call's socket");
  });

  test("a web call is created at Retell and its access token arrives as web_call.ready", async () => {
    const { h, apiKey, projectId, threadId } = await setUp();
    const events = await TestSocket.open(`${h.wsBase}/threads/${threadId}/events`, { authorization: apiKey });
    const response = await h.request({ method: "POST", url: `/voice/${threadId}/web-call`, headers: { authorization: apiKey }, payload: { project_id: projectId } });
    assert.equal(response.status, 200, response.body);
    const ready = await events.next((event) => event["type"] === "web_call.ready");
    const created = retell.requests.at(-1)!;
    assert.equal(created.path, "/v2/create-web-call");
    assert.deepEqual(created.json, { agent_id: agentId, metadata: { parley_call_id: ready["call_id"] } });
    assert.match(String(ready["access_token"]), /^eyJ/);
    const join = await TestSocket.open(`${h.wsBase}/calls/${String(ready["call_id"])}/ws?token=${String(ready["access_token"])}`).catch((error: { status: number }) => error);
    assert.equal((join as { status: number }).status, 404, "a Retell web call is joined at Retell, not on Parley's call socket");
    events.close();
  });

  test("DELETE stops an ongoing call at Retell (stop-call) as manual_stopped, and Retell's later call_ended still brings its transcript", async () => {
    const { h, apiKey, projectId, threadId } = await setUp();
    const { callId, retellId } = await placeCall(h, apiKey, threadId, projectId);
    const start = Date.now();
    await webhook(h, "call_started", { call_id: retellId, call_status: "ongoing", start_timestamp: start });
    const deleted = await h.request({ method: "DELETE", url: `/voice/${threadId}/phone-call`, headers: { authorization: apiKey } });
    assert.equal(deleted.status, 200);
    const deadline = Date.now() + 5000;
    while (!retell.requests.some((request) => request.path === `/v2/stop-call/${retellId}`) && Date.now() < deadline) await sleep(20);
    assert.ok(retell.requests.some((request) => request.path === `/v2/stop-call/${retellId}` && request.method === "POST"));
    await webhook(h, "call_ended", {
      call_id: retellId,
      call_status: "ended",
      start_timestamp: start,
      end_timestamp: Date.now(),
      disconnection_reason: "manual_stopped",
      recording_url: "https://retell-recordings.example/stopped.wav",
      transcript_object: [{ role: "user", content: "Hello?", words: [] }],
    });
    const call = await waitForCall(h.request, apiKey, callId, (detail) => detail.recording_url !== null);
    assert.equal(call.status, "ended");
    assert.equal(call.disconnection_reason, "manual_stopped");
    assert.equal(call.transcript_object?.length, 1);
  });

  test("a dial failure reported by Retell ends the queued call as an error with Retell's reason", async () => {
    const { h, apiKey, projectId, threadId } = await setUp();
    const { callId, retellId } = await placeCall(h, apiKey, threadId, projectId);
    await webhook(h, "call_ended", { call_id: retellId, call_status: "not_connected", disconnection_reason: "dial_busy", metadata: { parley_call_id: callId } });
    const call = await waitForCall(h.request, apiKey, callId, (detail) => detail.status !== "queued");
    assert.equal(call.status, "error");
    assert.equal(call.disconnection_reason, "dial_busy");
    assert.equal(call.duration_ms, null);
  });

  /** A call the caller has spoken in over the Custom LLM socket, before or without Retell's call_started. */
  async function answeredCall() {
    const { h, apiKey, projectId, threadId } = await setUp();
    const { callId, retellId } = await placeCall(h, apiKey, threadId, projectId);
    const llm = await RetellLlmClient.connect(h.wsBase, retellId);
    llm.send({ interaction_type: "response_required", response_id: 1, transcript: [{ role: "user", content: "What are your opening hours?" }] });
    await llm.response(1);
    return { h, apiKey, threadId, callId, retellId, llm };
  }

  function callEnded(retellId: string, callId: string, start: number, end: number) {
    return {
      call_id: retellId,
      call_status: "ended",
      start_timestamp: start,
      end_timestamp: end,
      disconnection_reason: "user_hangup",
      recording_url: "https://retell-recordings.example/hung-up.wav",
      metadata: { parley_call_id: callId },
      transcript_object: [
        { role: "user", content: "What are your opening hours?", words: [{ word: "What", start: 0.4, end: 0.6 }] },
        { role: "agent", content: "We are open from 9 to 5 on weekdays.", words: [{ word: "We", start: 2.1, end: 2.2 }] },
      ],
    };
  }

  test("Retell's call_ended and its socket closing, in either order, end the call once with Retell's whole record", async () => {
    for (const socketFirst of [true, false]) {
      const { h, apiKey, callId, retellId, llm } = await answeredCall();
      const start = Date.now() - 3_000;
      if (socketFirst) llm.close();
      const ended = webhook(h, "call_ended", callEnded(retellId, callId, start, start + 4_000));
      if (!socketFirst) llm.close();
      const read = async () => (await h.request({ method: "GET", url: `/calls/${callId}`, headers: { authorization: apiKey } })).json<CallDetail>();
      const call = await pollUntil(read, (detail) => detail.status !== "queued" && detail.status !== "ongoing", { what: "the call to end", intervalMs: 5 });
      assert.equal((await ended).status, 204);
      assert.equal(call.status, "ended");
      assert.equal(call.recording_url, "https://retell-recordings.example/hung-up.wav", `socket first: ${socketFirst}`);
      assert.ok(call.transcript_object?.some((entry) => entry.words.length > 0), JSON.stringify(call.transcript_object));
      assert.equal(call.duration_ms, 4_000);
    }
  });

  test("Retell's start time replaces Parley's when the caller spoke before call_started arrived, and usage follows it", async () => {
    const start = Date.now() - 2_000;
    const { h, apiKey, threadId, callId, retellId } = await answeredCall();
    const early = await waitForCall(h.request, apiKey, callId, (detail) => detail.status === "ongoing");
    assert.ok(early.start_timestamp! * 1000 >= start + 1_000, "the socket's turn started the call at Parley's clock");
    assert.equal((await webhook(h, "call_started", { call_id: retellId, call_status: "ongoing", start_timestamp: start, metadata: { parley_call_id: callId } })).status, 204);
    const started = await waitForCall(h.request, apiKey, callId, (detail) => detail.start_timestamp === Math.floor(start / 1000));
    assert.equal(started.status, "ongoing");
    assert.equal((await webhook(h, "call_ended", callEnded(retellId, callId, start, start + 6_000))).status, 204);
    const call = await waitForCall(h.request, apiKey, callId, (detail) => detail.status === "ended");
    assert.equal(call.start_timestamp, Math.floor(start / 1000));
    assert.equal(call.duration_ms, 6_000);
    const thread = (await h.request({ method: "GET", url: `/threads/${threadId}`, headers: { authorization: apiKey } })).json<{ usage: { voice_minutes: number; voice_cost: number } }>();
    assert.equal(thread.usage.voice_minutes, 0.1);
    assert.equal(thread.usage.voice_cost, 0.006);
  });

  test("Retell's times replace Parley's also when they arrive after Parley ended the call, and usage follows them", async () => {
    const start = Date.now() - 2_000;
    const { h, apiKey, threadId, callId, retellId } = await answeredCall();
    assert.equal((await h.request({ method: "DELETE", url: `/voice/${threadId}/phone-call`, headers: { authorization: apiKey } })).status, 200);
    await waitForCall(h.request, apiKey, callId, (detail) => detail.status === "ended");
    assert.equal((await webhook(h, "call_ended", { ...callEnded(retellId, callId, start, start + 9_000), disconnection_reason: "manual_stopped" })).status, 204);
    const call = await waitForCall(h.request, apiKey, callId, (detail) => detail.recording_url !== null);
    assert.equal(call.start_timestamp, Math.floor(start / 1000));
    assert.equal(call.duration_ms, 9_000);
    const thread = (await h.request({ method: "GET", url: `/threads/${threadId}`, headers: { authorization: apiKey } })).json<{ usage: { voice_minutes: number } }>();
    assert.equal(thread.usage.voice_minutes, 0.15);
  });
}, telephonySuite());
