import assert from "node:assert/strict";
import { test } from "node:test";
import { decodeWav } from "../../src/providers/speech/audio.js";
import { processed, voiceConfig, voiceSuite, waitForCall, type CallDetail } from "./support.js";
import { forEachDatabase } from "../support/harness.js";

interface Message {
  message_id: string;
  role: string;
  message: string;
  conversation_id: number;
  extras: Record<string, unknown>;
  conversation_end_time: string | null;
}

forEachDatabase("phone calls on the simulated provider", (h) => {
  async function call(apiKey: string, threadId: string, payload: Record<string, unknown>) {
    return h().request({ method: "POST", url: `/voice/${threadId}/phone-call`, headers: { authorization: apiKey }, payload });
  }

  test("an immediate call runs to its end with transcript, recording, word timings, analysis, history and usage", async () => {
    const { apiKey, projectId } = await h().organization();
    const threadId = await h().thread(apiKey);
    const chat = await h().request({
      method: "POST",
      url: "/chat",
      headers: { authorization: apiKey },
      payload: { thread_id: threadId, message: "hi", service_config_name: "support" },
    });
    assert.equal(chat.status, 200);

    const created = await call(apiKey, threadId, { callee: "+1 (415) 555-2671", project_id: projectId });
    assert.equal(created.status, 200);
    const view = created.json<Record<string, unknown>>();
    assert.deepEqual(Object.keys(view).sort(), ["call_type", "duration_ms", "end_timestamp", "from_number", "id", "scheduled_for", "start_timestamp", "status", "to_number"]);
    assert.equal(view.status, "queued");
    assert.equal(view.call_type, "phone_call");
    assert.equal(view.to_number, "+14155552671");
    assert.equal(view.from_number, "+14155550100");
    assert.equal(view.scheduled_for, null);

    const done = await waitForCall(h().request, apiKey, String(view.id), processed);
    assert.equal(done.status, "ended");
    assert.equal(done.disconnection_reason, "user_hangup");
    assert.equal(done.direction, "outbound");
    assert.equal(done.conversation_id, 2);
    assert.ok(done.duration_ms !== null && done.duration_ms > 0);
    assert.ok(done.start_timestamp !== null && done.end_timestamp !== null && done.end_timestamp >= done.start_timestamp);
    assert.equal(
      done.transcript,
      ["User: Hello?", "Agent: Welcome to Acme!", "User: What are your opening hours?", "Agent: We are open from 9 to 5 on weekdays.", "User: Great, thanks. Bye."].join("\n"),
    );
    const utterances = done.transcript_object ?? [];
    assert.deepEqual(utterances.map((utterance) => utterance.role), ["user", "agent", "user", "agent", "user"]);
    const words = utterances.flatMap((utterance) => utterance.words);
    assert.equal(utterances[1]!.words.map((word) => word.word).join(" "), "Welcome to Acme");
    words.forEach((word, index) => {
      assert.ok(word.end >= word.start);
      if (index > 0) assert.ok(word.start >= words[index - 1]!.start);
    });
    assert.equal(typeof done.call_analysis?.call_summary, "string");
    assert.ok(["Positive", "Neutral", "Negative", "Unknown"].includes(done.call_analysis!.user_sentiment));
    assert.ok("asked_about_hours" in done.call_analysis!.custom_analysis_data);

    const url = new URL(done.recording_url ?? "", "http://localhost");
    const recording = await h().app.server.inject({ method: "GET", url: url.pathname + url.search });
    assert.equal(recording.statusCode, 200);
    assert.equal(recording.headers["content-type"], "audio/wav");
    const audio = decodeWav(recording.rawPayload);
    assert.ok(audio.samples.length / audio.sampleRate >= words.at(-1)!.end);
    const ranged = await h().app.server.inject({ method: "GET", url: url.pathname + url.search, headers: { range: "bytes=0-99" } });
    assert.equal(ranged.statusCode, 206);
    assert.equal(ranged.headers["content-range"], `bytes 0-99/${recording.rawPayload.length}`);
    assert.deepEqual(ranged.rawPayload, recording.rawPayload.subarray(0, 100));
    const beyond = await h().app.server.inject({ method: "GET", url: url.pathname + url.search, headers: { range: `bytes=${recording.rawPayload.length}-` } });
    assert.equal(beyond.statusCode, 416);
    assert.equal(beyond.headers["content-range"], `bytes */${recording.rawPayload.length}`);
    const tampered = await h().app.server.inject({ method: "GET", url: url.pathname + url.search.replace(/signature=(.)/, (_match, first: string) => `signature=${first === "0" ? "1" : "0"}`) });
    assert.equal(tampered.statusCode, 403);
    const expired = await h().app.server.inject({ method: "GET", url: url.pathname + url.search.replace(/expires=\d+/, "expires=1000") });
    assert.equal(expired.statusCode, 403);

    const history = await h().request({ method: "GET", url: `/threads/${threadId}/messages`, headers: { authorization: apiKey } });
    const messages = history.json<{ messages: Message[] }>().messages;
    assert.deepEqual(messages.map((m) => m.conversation_id), [1, 1, 2, 2, 2, 2, 2]);
    const voiceMessages = messages.slice(2);
    assert.deepEqual(voiceMessages.map((m) => m.role), ["user", "assistant", "user", "assistant", "user"]);
    assert.ok(voiceMessages.every((m) => m.extras.call_id === done.id && m.extras.source === "voice" && m.conversation_end_time !== null));
    assert.ok(messages[0]!.conversation_end_time !== null);

    const thread = (await h().request({ method: "GET", url: `/threads/${threadId}`, headers: { authorization: apiKey } })).json<{
      usage: { voice_minutes: number; voice_cost: number; total_cost: number };
    }>();
    const minutes = done.duration_ms! / 60_000;
    assert.ok(Math.abs(thread.usage.voice_minutes - minutes) < 1e-5);
    assert.ok(Math.abs(thread.usage.voice_cost - minutes * 0.06) < 1e-7);
  });

  test("the next chat after a call opens a new conversation", async () => {
    const { apiKey, projectId } = await h().organization();
    const threadId = await h().thread(apiKey);
    const id = (await call(apiKey, threadId, { callee: "+14155552671", project_id: projectId })).json<{ id: string }>().id;
    const done = await waitForCall(h().request, apiKey, id, (c) => c.status === "ended");
    const chat = await h().request({
      method: "POST",
      url: "/chat",
      headers: { authorization: apiKey },
      payload: { thread_id: threadId, message: "where is the office located", service_config_name: "support" },
    });
    assert.equal(chat.json<{ extras: { conversation_id: number } }>().extras.conversation_id, (done.conversation_id ?? 0) + 1);
  });

  test("without a script the built-in agent plays a caller who asks the knowledge questions", async () => {
    const { apiKey, projectId } = await h().organization({ ...voiceConfig, voice: { ...voiceConfig.voice, simulated: { ring_ms: 10, turn_ms: 10 } } });
    const threadId = await h().thread(apiKey);
    const id = (await call(apiKey, threadId, { callee: "+14155552671", project_id: projectId })).json<{ id: string }>().id;
    const done = await waitForCall(h().request, apiKey, id, (c) => c.status === "ended");
    assert.match(done.transcript ?? "", /User: Where is the office located\?\nAgent: Our office is at 1 Main Street\./);
  });

  test("a call reaching max_call_seconds ends as max_duration_reached", async () => {
    const { apiKey, projectId } = await h().organization({
      ...voiceConfig,
      voice: { ...voiceConfig.voice, max_call_seconds: 1, simulated: { script: ["Hello?", "Hmm", "Let me think", "Still here", "Bye"], ring_ms: 10, turn_ms: 400 } },
    });
    const threadId = await h().thread(apiKey);
    const id = (await call(apiKey, threadId, { callee: "+14155552671", project_id: projectId })).json<{ id: string }>().id;
    const done = await waitForCall(h().request, apiKey, id, (c) => c.status === "ended");
    assert.equal(done.disconnection_reason, "max_duration_reached");
    assert.ok(done.duration_ms! >= 1000 && done.duration_ms! < 2000);
  });

  test("DELETE stops an ongoing call as manual_stopped and ends its conversation", async () => {
    const { apiKey, projectId } = await h().organization({
      ...voiceConfig,
      voice: { ...voiceConfig.voice, simulated: { script: ["Hello?", "One", "Two", "Three", "Four", "Bye"], ring_ms: 10, turn_ms: 300 } },
    });
    const threadId = await h().thread(apiKey);
    const id = (await call(apiKey, threadId, { callee: "+14155552671", project_id: projectId })).json<{ id: string }>().id;
    await waitForCall(h().request, apiKey, id, (c) => c.status === "ongoing" && (c.transcript ?? "").includes("Agent:"));
    const stopped = await h().request({ method: "DELETE", url: `/voice/${threadId}/phone-call`, headers: { authorization: apiKey } });
    assert.deepEqual(stopped.json(), { response: "Call ended" });
    const done = await waitForCall(h().request, apiKey, id, (c) => c.status === "ended");
    assert.equal(done.disconnection_reason, "manual_stopped");
    const lines = (done.transcript ?? "").split("\n").length;
    await new Promise((resolve) => setTimeout(resolve, 700));
    const later = await waitForCall(h().request, apiKey, id, () => true);
    assert.equal((later.transcript ?? "").split("\n").length, lines, "nothing is said after the call ended");
    const messages = (await h().request({ method: "GET", url: `/threads/${threadId}/messages`, headers: { authorization: apiKey } })).json<{ messages: Message[] }>();
    assert.ok(messages.messages.every((m) => m.conversation_end_time !== null));
    const again = await h().request({ method: "DELETE", url: `/voice/${threadId}/phone-call`, headers: { authorization: apiKey } });
    assert.equal(again.status, 404);
  });

  test("DELETE cancels a scheduled call, which never opens a conversation", async () => {
    const { apiKey, projectId } = await h().organization();
    const threadId = await h().thread(apiKey);
    const scheduledFor = new Date(Date.now() + 60_000).toISOString();
    const created = await call(apiKey, threadId, { callee: "+14155552671", project_id: projectId, scheduled_for: scheduledFor });
    assert.equal(created.json<{ status: string }>().status, "scheduled");
    assert.equal(created.json<{ scheduled_for: string }>().scheduled_for, scheduledFor);
    const cancelled = await h().request({ method: "DELETE", url: `/voice/${threadId}/phone-call`, headers: { authorization: apiKey } });
    assert.deepEqual(cancelled.json(), { response: "Call ended" });
    const done = await waitForCall(h().request, apiKey, created.json<{ id: string }>().id, () => true);
    assert.equal(done.status, "ended");
    assert.equal(done.disconnection_reason, "cancelled");
    assert.equal(done.conversation_id, null);
    assert.equal(done.duration_ms, null);
    const none = await h().request({ method: "DELETE", url: `/voice/${threadId}/phone-call`, headers: { authorization: apiKey } });
    assert.deepEqual(none.json(), { detail: "No active phone call on this thread" });
  });

  test("a thread holds one active phone call: concurrent requests get one call and 409s", async () => {
    const { apiKey, projectId } = await h().organization();
    const threadId = await h().thread(apiKey);
    const scheduledFor = new Date(Date.now() + 60_000).toISOString();
    const responses = await Promise.all(
      Array.from({ length: 5 }, () => call(apiKey, threadId, { callee: "+14155552671", project_id: projectId, scheduled_for: scheduledFor })),
    );
    assert.deepEqual(responses.map((r) => r.status).sort(), [200, 409, 409, 409, 409]);
    assert.deepEqual(responses.find((r) => r.status === 409)!.json(), { detail: "The thread already has an active phone call" });
    const immediate = await call(apiKey, threadId, { callee: "+14155552671", project_id: projectId });
    assert.equal(immediate.status, 409);
    await h().request({ method: "DELETE", url: `/voice/${threadId}/phone-call`, headers: { authorization: apiKey } });
    assert.equal((await call(apiKey, threadId, { callee: "+14155552671", project_id: projectId, scheduled_for: scheduledFor })).status, 200);
  });

  test("a call whose carrying instance stopped vouching for it ends as error_instance_lost", async () => {
    const { apiKey, projectId } = await h().organization({
      ...voiceConfig,
      voice: { ...voiceConfig.voice, simulated: { script: ["Hello?", "One", "Two", "Three", "Bye"], ring_ms: 10, turn_ms: 400 } },
    });
    const threadId = await h().thread(apiKey);
    const id = (await call(apiKey, threadId, { callee: "+14155552671", project_id: projectId })).json<{ id: string }>().id;
    await waitForCall(h().request, apiKey, id, (c) => c.status === "ongoing");
    await h().database.db.query("UPDATE calls SET owner = 'a-dead-instance', heartbeat_at = now() - interval '1 hour' WHERE id = $1", [id]);
    const done: CallDetail = await waitForCall(h().request, apiKey, id, (c) => c.status === "error");
    assert.equal(done.disconnection_reason, "error_instance_lost");
    assert.ok(done.duration_ms !== null && done.duration_ms >= 0);
    const messages = (await h().request({ method: "GET", url: `/threads/${threadId}/messages`, headers: { authorization: apiKey } })).json<{ messages: Message[] }>();
    assert.ok(messages.messages.every((m) => m.conversation_end_time !== null));
  });
}, voiceSuite());
