import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { resample } from "../../../src/providers/speech/audio.js";
import { PocketsphinxStt } from "../../../src/providers/speech/pocketsphinx/pocketsphinx-stt.js";
import { decodeWav } from "../../../src/providers/speech/audio.js";
import { eventually, pollUntil } from "../../support/polling.js";
import { wordsOf } from "../../support/speech-audio.js";
import { acmeAgent } from "../../support/fixtures.js";
import { accountId, sleep, TestSocket, waitForCall, type CallDetail } from "../../voice-calls/support.js";
import { espeakMulaw, sid, signedStatus, startFakeTwilio, streamOf, TwilioStream, type FakeTwilio } from "./fake-twilio.js";
import { forEachDatabase, injector, type Harness } from "../../support/harness.js";
import { publicBaseUrl, telephonySuite } from "./support.js";

const accountSid = `AC${"1f".repeat(16)}`;
/** Long enough to be talked over: about ten seconds of speech. */
const longAnswer =
  "We are open from 9 to 5 on weekdays. On Saturdays we open at 10 in the morning and close at 2 in the afternoon. On Sundays and public holidays the office is closed, but our support line answers around the clock.";
const authToken = "twilio-auth-token-fedcba9876543210";

function twilioConfig(twilio: FakeTwilio) {
  return {
    agent: acmeAgent,
    pricing: { voice_minute_usd: 0.06 },
    voice: {
      provider: "twilio",
      accounts: [{ id: accountId, phone_numbers: ["+14155550100"] }],
      twilio: { account_sid: accountSid, auth_token: authToken, api_base_url: twilio.url },
    },
  };
}

forEachDatabase("Twilio voice provider", (harness: () => Harness) => {
  let twilio: FakeTwilio;
  let speech: Uint8Array;
  const listener = new PocketsphinxStt("en-US", 1);
  before(async () => {
    twilio = await startFakeTwilio(accountSid, authToken);
    speech = await espeakMulaw("Hello. What are your opening hours?");
  });
  after(async () => {
    listener.close();
    await twilio.close();
  });

  async function setUp(voice: Record<string, unknown> = {}) {
    const h = harness();
    const config = twilioConfig(twilio);
    const org = await h.organization({ ...config, voice: { ...config.voice, ...voice } });
    const threadId = await h.thread(org.apiKey);
    return { h, ...org, threadId };
  }

  async function placeCall(h: Harness, apiKey: string, threadId: string, projectId: string) {
    const response = await h.request({ method: "POST", url: `/voice/${threadId}/phone-call`, headers: { authorization: apiKey }, payload: { callee: "+1 415 555 2671", project_id: projectId } });
    assert.equal(response.status, 200, response.body);
    const callId = response.json<{ id: string }>().id;
    const created = twilio.forms.at(-1)!;
    const callSid = await h.app.db.query<{ provider_call_id: string }>("SELECT provider_call_id FROM calls WHERE id = $1", [callId]);
    return { callId, form: created.form, callSid: callSid[0]!.provider_call_id, stream: streamOf(created.form.get("Twiml") ?? "") };
  }

  async function status(h: Harness, callId: string, callSid: string, callStatus: string, token = authToken, url?: string, extra: Record<string, string> = {}) {
    const callbackUrl = `${publicBaseUrl}/voice/twilio/status/${callId}`;
    const { body, signature } = signedStatus(token, url ?? callbackUrl, { AccountSid: accountSid, CallSid: callSid, CallStatus: callStatus, ApiVersion: "2010-04-01", Direction: "outbound-api", ...extra });
    return h.request({ method: "POST", url: `/voice/twilio/status/${callId}`, headers: { "content-type": "application/x-www-form-urlencoded", "x-twilio-signature": signature }, payload: body });
  }

  function localStream(h: Harness, url: string): string {
    return url.replace(publicBaseUrl.replace(/^https/, "wss"), h.wsBase);
  }

  /** An answered call whose caller has said something the recognizer heard, its media stream still running. */
  async function talkingCall() {
    const { h, apiKey, projectId, threadId } = await setUp();
    const { callId, callSid, stream } = await placeCall(h, apiKey, threadId, projectId);
    assert.equal((await status(h, callId, callSid, "in-progress")).status, 204);
    const media = await TwilioStream.open(localStream(h, stream.url));
    media.start(accountSid, callSid, stream.token);
    media.startLine();
    await waitForCall(h.request, apiKey, callId, (detail) => detail.status === "ongoing");
    for (let attempt = 0; ; attempt++) {
      await media.say(speech);
      const heard = await waitForCall(h.request, apiKey, callId, (detail) => (detail.transcript ?? "").includes("User:"), 20_000).catch(() => undefined);
      if (heard) break;
      assert.ok(attempt < 2, "the recognizer heard nothing of the caller in three tries");
    }
    return { h, apiKey, threadId, callId, callSid, media };
  }

  async function voiceMinutes(h: Harness, apiKey: string, threadId: string): Promise<number> {
    return (await h.request({ method: "GET", url: `/threads/${threadId}`, headers: { authorization: apiKey } })).json<{ usage: { voice_minutes: number } }>().usage.voice_minutes;
  }

  /** Reads the call as fast as a client could until it is over: the first read that shows it ended. */
  function firstEndedRead(request: Harness["request"], apiKey: string, callId: string): Promise<CallDetail> {
    const read = async () => (await request({ method: "GET", url: `/calls/${callId}`, headers: { authorization: apiKey } })).json<CallDetail>();
    return pollUntil(read, (detail) => detail.status !== "queued" && detail.status !== "ongoing", { what: `call ${callId} to end`, timeoutMs: 30_000, intervalMs: 5 });
  }

  /** decisions.md (Calls): the read that shows `ended` shows the whole record, and the call lasts as long as its recording. */
  async function assertCompleteRecord(h: Harness, call: CallDetail): Promise<void> {
    assert.equal(call.status, "ended", JSON.stringify(call));
    assert.equal(call.disconnection_reason, "user_hangup");
    assert.ok(call.recording_url, `the recording is there as the call shows ended: ${JSON.stringify(call)}`);
    assert.ok(call.transcript_object?.some((entry) => entry.role === "user" && entry.words.length > 0), `the timed transcript is there as the call shows ended: ${JSON.stringify(call.transcript_object)}`);
    assert.ok(call.transcript?.includes("User:"));
    const url = new URL(call.recording_url);
    const wav = await h.app.server.inject({ method: "GET", url: url.pathname + url.search });
    assert.equal(wav.statusCode, 200);
    const audio = decodeWav(wav.rawPayload);
    const recordedMs = (audio.samples.length * 1000) / audio.sampleRate;
    assert.ok(Math.abs(recordedMs - (call.duration_ms ?? 0)) <= 250, `the recording (${recordedMs} ms) lasts as long as the call (${call.duration_ms} ms)`);
  }

  test("a hang-up whose stream stop comes before the completed callback ends the call once, with its whole record", async () => {
    const { h, apiKey, threadId, callId, callSid, media } = await talkingCall();
    // Twilio sends both at once; the stop is first on the wire.
    media.stop(accountSid, callSid);
    const completed = status(h, callId, callSid, "completed", authToken, undefined, { CallDuration: "5" });
    const call = await firstEndedRead(h.request, apiKey, callId);
    assert.equal((await completed).status, 204);
    await assertCompleteRecord(h, call);
    assert.equal(await voiceMinutes(h, apiKey, threadId), Math.round((5 / 60) * 1e6) / 1e6, "usage follows Twilio's CallDuration, also when it comes after the end");
  });

  test("a hang-up whose completed callback comes before the stream stop ends the call once, with its whole record", async () => {
    const { h, apiKey, threadId, callId, callSid, media } = await talkingCall();
    const completed = status(h, callId, callSid, "completed", authToken, undefined, { CallDuration: "7" });
    const ended = firstEndedRead(h.request, apiKey, callId);
    assert.equal((await completed).status, 204);
    media.stop(accountSid, callSid);
    await assertCompleteRecord(h, await ended);
    assert.equal(await voiceMinutes(h, apiKey, threadId), Math.round((7 / 60) * 1e6) / 1e6, "usage follows Twilio's CallDuration");
  });

  test("a media stream that drops without a stop, with the completed callback at once, ends the call once, with its whole record", async () => {
    const { h, apiKey, callId, callSid, media } = await talkingCall();
    media.close();
    const completed = status(h, callId, callSid, "completed");
    const call = await firstEndedRead(h.request, apiKey, callId);
    assert.equal((await completed).status, 204);
    await assertCompleteRecord(h, call);
  });

  test("a completed callback that reaches another instance than the media stream's ends the call once, with its whole record", async () => {
    const { h, apiKey, callId, callSid, media } = await talkingCall();
    const second = injector(await h.startApp({ ownPool: true }));
    const callbackUrl = `${publicBaseUrl}/voice/twilio/status/${callId}`;
    const { body, signature } = signedStatus(authToken, callbackUrl, { AccountSid: accountSid, CallSid: callSid, CallStatus: "completed", ApiVersion: "2010-04-01", Direction: "outbound-api" });
    const completed = second({ method: "POST", url: `/voice/twilio/status/${callId}`, headers: { "content-type": "application/x-www-form-urlencoded", "x-twilio-signature": signature }, payload: body });
    const call = await firstEndedRead(second, apiKey, callId);
    assert.equal((await completed).status, 204);
    await assertCompleteRecord(h, call);
    assert.equal((await media.waitClosed()).code, 1000, "the instance holding the stream lets it go");
  });




  test("an end whose record the carrying instance never delivers is waited for no longer than CALL_RECORD_WAIT_MS", async () => {
    const { h, apiKey, projectId, threadId } = await setUp();
    const { callId, callSid, stream } = await placeCall(h, apiKey, threadId, projectId);
    const media = await TwilioStream.open(localStream(h, stream.url));
    media.start(accountSid, callSid, stream.token);
    await waitForCall(h.request, apiKey, callId, (detail) => detail.status === "ongoing");
    // As if another instance carried the call's audio and were wedged: nobody answers for the record.
    await h.app.db.query("UPDATE calls SET owner = 'a-wedged-instance' WHERE id = $1", [callId]);
    assert.equal((await status(h, callId, callSid, "completed")).status, 204);
    const waiting = (await h.request({ method: "GET", url: `/calls/${callId}`, headers: { authorization: apiKey } })).json<CallDetail>();
    assert.equal(waiting.status, "ongoing", "the end waits for the record");
    const call = await waitForCall(h.request, apiKey, callId, (detail) => detail.status !== "ongoing", 30_000);
    assert.equal(call.status, "ended");
    assert.equal(call.disconnection_reason, "user_hangup");
    media.close();
  });

  test("a whole call: the REST form, signed status callbacks, the question heard on μ-law, the answer spoken back, and Parley's recording of both sides", async () => {
    const { h, apiKey, projectId, threadId } = await setUp();
    const events = await TestSocket.open(`${h.wsBase}/threads/${threadId}/events`, { authorization: apiKey });
    const { callId, form, callSid, stream } = await placeCall(h, apiKey, threadId, projectId);

    const request = twilio.forms.at(-1)!;
    assert.equal(request.path, `/2010-04-01/Accounts/${accountSid}/Calls.json`);
    assert.equal(request.authorization, `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString("base64")}`);
    assert.equal(form.get("To"), "+14155552671");
    assert.equal(form.get("From"), "+14155550100");
    assert.equal(form.get("StatusCallback"), `${publicBaseUrl}/voice/twilio/status/${callId}`);
    assert.deepEqual(form.getAll("StatusCallbackEvent"), ["initiated", "ringing", "answered", "completed"]);
    assert.match(form.get("Twiml") ?? "", /^<\?xml version="1.0" encoding="UTF-8"\?><Response><Connect><Stream url="[^"]+"><Parameter name="token" value="[^"]+"\/><\/Stream><\/Connect><\/Response>$/);
    assert.equal(stream.url, `wss://parley.example.test/voice/twilio/media/${callId}`);
    assert.match(callSid, /^CA[0-9a-f]{32}$/);

    for (const callStatus of ["initiated", "ringing", "in-progress"]) assert.equal((await status(h, callId, callSid, callStatus)).status, 204);
    const media = await TwilioStream.open(localStream(h, stream.url));
    media.start(accountSid, callSid, stream.token);
    media.startLine();
    await events.next((event) => event["type"] === "call.updated" && (event["call"] as CallDetail).status === "ongoing");
    // PocketSphinx's wideband model hears eSpeak on a telephone line imperfectly ("oh you are opening up new"), and
    // where a turn starts shifts with the line's timing: a caller who is not understood asks again, as one would.
    let answer: string | undefined;
    let answerFrom = 0;
    for (let attempt = 0; attempt < 3 && answer === undefined; attempt++) {
      answerFrom = media.playedAudio().length;
      await media.say(speech);
      const reply = await events.next((event) => event["type"] === "message.created" && (event["message"] as { role: string }).role === "assistant", 60_000);
      const text = (reply["message"] as { message: string }).message;
      if (/open from 9 to 5/.test(text)) answer = text;
      else await eventually(() => media.playedOut(), { what: "the misunderstood reply's end", timeoutMs: 60_000 });
    }
    const thread = await h.request({ method: "GET", url: `/threads/${threadId}/messages`, headers: { authorization: apiKey } });
    assert.ok(answer, `the agent answered the question within three tries: ${thread.body}`);
    // The answer was spoken on the stream, sentence by sentence with a mark after each, and Twilio played it all.
    await eventually(() => media.echoed.length > 0 && media.echoed.length === media.received.filter((frame) => frame.event === "mark").length, { what: "the answer's marks to be played", timeoutMs: 60_000 });
    assert.ok(media.echoed.every((mark) => mark.played));
    assert.ok(!media.received.some((frame) => frame.event === "clear"), `nobody barged in: ${(await h.request({ method: "GET", url: `/threads/${threadId}/messages`, headers: { authorization: apiKey } })).body}`);
    const spoken = media.playedAudio();
    assert.ok(spoken.length > 8000, `a second or more of the agent's speech (${spoken.length} samples at 8 kHz)`);
    const heard = wordsOf(await listener.transcribe(resample(spoken.subarray(answerFrom), 8000, 16_000)));
    assert.ok(["open", "nine", "five", "week", "weekdays"].some((word) => heard.includes(word)), `a recognizer hears the answer on the telephone line: ${heard.join(" ")}`);
    media.stop(accountSid, callSid);
    const ended = await waitForCall(h.request, apiKey, callId, (detail) => detail.status === "ended");
    assert.equal(ended.disconnection_reason, "user_hangup");
    assert.equal((await status(h, callId, callSid, "completed")).status, 204);

    const call = await waitForCall(h.request, apiKey, callId, (detail) => detail.recording_url !== null && detail.call_analysis !== null, 30_000);
    assert.match(call.recording_url ?? "", /^https:\/\/parley\.example\.test\/recordings\//);
    const user = call.transcript_object?.find((entry) => entry.role === "user" && wordsOf(entry.content).some((word) => word === "opening" || word === "hours"));
    const agent = call.transcript_object?.find((entry) => entry.role === "agent" && /open from 9 to 5/.test(entry.content));
    assert.ok(user && agent, JSON.stringify(call.transcript_object));
    const recordingPath = new URL(call.recording_url!).pathname + new URL(call.recording_url!).search;
    const wav = await h.app.server.inject({ method: "GET", url: recordingPath });
    assert.equal(wav.statusCode, 200);
    const audio = decodeWav(wav.rawPayload);
    assert.equal(audio.sampleRate, 16_000);
    // Both voices are in the recording where the transcript's word timings place them.
    for (const entry of [user!, agent!]) {
      const from = Math.floor(entry.words[0]!.start * audio.sampleRate);
      const to = Math.ceil(entry.words.at(-1)!.end * audio.sampleRate);
      const loudest = audio.samples.subarray(from, to).reduce((max, sample) => Math.max(max, Math.abs(sample)), 0);
      assert.ok(loudest > 2000, `${entry.role} is silent in the recording at ${entry.words[0]!.start}-${entry.words.at(-1)!.end} s`);
    }
    assert.ok(Math.abs((audio.samples.length * 1000) / audio.sampleRate - (call.duration_ms ?? 0)) <= 250, "the recording lasts as long as the call");
    events.close();
  });

  test("barge-in: the caller talks over the answer, Parley sends clear, and the transcript keeps only what was played", async () => {
    const h = harness();
    const org = await h.organization({ ...twilioConfig(twilio), agent: { ...acmeAgent, knowledge: [{ question: "What are your opening hours?", answer: longAnswer }] } });
    const threadId = await h.thread(org.apiKey);
    const { callId, callSid, stream } = await placeCall(h, org.apiKey, threadId, org.projectId);
    assert.equal((await status(h, callId, callSid, "in-progress")).status, 204);
    const media = await TwilioStream.open(localStream(h, stream.url));
    media.start(accountSid, callSid, stream.token);
    media.startLine();
    await waitForCall(h.request, org.apiKey, callId, (detail) => detail.status === "ongoing");
    // Two seconds into the answer (at 8 kHz), the caller speaks over it. A shorter reply (the question misheard, see
    // above) plays out, and the caller asks again.
    for (let attempt = 0; ; attempt++) {
      const before = media.sentAudio().length;
      await media.say(speech);
      await eventually(() => media.sentAudio().length - before > 16_000 || (media.sentAudio().length > before && media.playedOut()), { what: "an answer", timeoutMs: 60_000 });
      if (media.sentAudio().length - before > 16_000) break;
      assert.ok(attempt < 2, "the agent never understood the question");
    }
    await media.say(await espeakMulaw("Thank you, goodbye."));
    await eventually(() => media.received.some((frame) => frame.event === "clear"), { what: "Parley to clear Twilio's buffer", timeoutMs: 10_000 });
    const played = media.playedAudio().length;
    const sent = media.sentAudio().length;
    assert.ok(played < sent || sent < 8 * 8000, `the caller did not hear the whole answer (${played} of ${sent} samples sent)`);
    await sleep(1500);
    media.stop(accountSid, callSid);
    const call = await waitForCall(h.request, org.apiKey, callId, (detail) => detail.status === "ended" && detail.transcript_object !== null);
    const agent = call.transcript_object?.find((entry) => entry.role === "agent" && entry.content.startsWith("We are open"));
    assert.ok(agent && agent.content.length < longAnswer.length, `the agent's turn is cut where it was interrupted: ${JSON.stringify(call.transcript_object)}`);
    assert.ok(longAnswer.startsWith(agent.content.replace(/[.…]+$/, "").trim().slice(0, 20)), `and it is the beginning of the answer: ${agent.content}`);
    const stored = await h.request({ method: "GET", url: `/threads/${threadId}/messages?limit=20`, headers: { authorization: org.apiKey } });
    assert.equal(stored.status, 200);
    assert.ok(!stored.body.includes("public holidays"), "the unspoken end of the answer is not in the thread's history");
  });

  test("a status callback with a bad, missing or misplaced signature is refused with 403 and changes nothing", async () => {
    const { h, apiKey, projectId, threadId } = await setUp();
    const { callId, callSid } = await placeCall(h, apiKey, threadId, projectId);
    assert.equal((await status(h, callId, callSid, "busy", "some-other-auth-token")).status, 403);
    assert.equal((await status(h, callId, callSid, "busy", authToken, `${publicBaseUrl}/voice/twilio/status/another-call`)).status, 403);
    const unsigned = await h.request({ method: "POST", url: `/voice/twilio/status/${callId}`, headers: { "content-type": "application/x-www-form-urlencoded" }, payload: `CallSid=${callSid}&CallStatus=busy` });
    assert.equal(unsigned.status, 403);
    assert.deepEqual(unsigned.json(), { detail: "Invalid signature" });
    assert.equal((await status(h, "no-such-call", callSid, "busy")).status, 403);
    assert.equal((await status(h, callId, sid("CA"), "busy")).status, 403, "a signed callback naming another CallSid is refused");
    const detail = (await h.request({ method: "GET", url: `/calls/${callId}`, headers: { authorization: apiKey } })).json<CallDetail>();
    assert.equal(detail.status, "queued");
  });

  test("a media stream with a wrong token, or for an unknown call, is closed with 4403 before any audio is taken", async () => {
    const { h, apiKey, projectId, threadId } = await setUp();
    const { callId, callSid, stream } = await placeCall(h, apiKey, threadId, projectId);
    const wrong = await TwilioStream.open(localStream(h, stream.url));
    wrong.start(accountSid, callSid, "not-the-token");
    wrong.send({ event: "media", streamSid: wrong.streamSid, media: { payload: Buffer.from(speech.subarray(0, 160)).toString("base64"), timestamp: "0" } });
    assert.equal((await wrong.waitClosed()).code, 4403);
    const unknown = await TwilioStream.open(`${h.wsBase}/voice/twilio/media/not-a-call`);
    unknown.start(accountSid, callSid, stream.token);
    assert.equal((await unknown.waitClosed()).code, 4403);
    const detail = (await h.request({ method: "GET", url: `/calls/${callId}`, headers: { authorization: apiKey } })).json<CallDetail>();
    assert.equal(detail.status, "queued");
  });

  test("dial failures become dial_no_answer, dial_busy and dial_failed; a callback delivered twice changes nothing", async () => {
    for (const [callStatus, reason] of [["no-answer", "dial_no_answer"], ["busy", "dial_busy"], ["failed", "dial_failed"]] as const) {
      const { h, apiKey, projectId, threadId } = await setUp();
      const { callId, callSid } = await placeCall(h, apiKey, threadId, projectId);
      assert.equal((await status(h, callId, callSid, callStatus)).status, 204);
      const call = await waitForCall(h.request, apiKey, callId, (detail) => detail.status !== "queued");
      assert.equal(call.status, "error");
      assert.equal(call.disconnection_reason, reason);
      const before = await h.app.db.query<{ n: number }>("SELECT count(*)::int AS n FROM thread_events WHERE thread_id = $1", [threadId]);
      assert.equal((await status(h, callId, callSid, callStatus)).status, 204);
      const again = (await h.request({ method: "GET", url: `/calls/${callId}`, headers: { authorization: apiKey } })).json<CallDetail>();
      assert.deepEqual(again, call);
      const afterwards = await h.app.db.query<{ n: number }>("SELECT count(*)::int AS n FROM thread_events WHERE thread_id = $1", [threadId]);
      assert.equal(afterwards[0]?.n, before[0]?.n);
    }
  });

  test("Twilio answering 500 or hanging at creation: the call is error with the reason, and the thread keeps working", async () => {
    const { h, apiKey, projectId, threadId } = await setUp();
    for (const [behaviour, detail] of [
      [{ kind: "status", status: 500 }, "Voice provider failed: Twilio answered 500: Internal Server Error"],
      [{ kind: "hang" }, "Voice provider failed: Twilio did not answer within 1.5 s"],
    ] as const) {
      twilio.behave(behaviour);
      try {
        const response = await h.request({ method: "POST", url: `/voice/${threadId}/phone-call`, headers: { authorization: apiKey }, payload: { callee: "+14155552671", project_id: projectId } });
        assert.equal(response.status, 502);
        assert.deepEqual(response.json(), { detail });
      } finally {
        twilio.behave({ kind: "ok" });
      }
      const calls = (await h.request({ method: "GET", url: `/calls?thread_id=${threadId}`, headers: { authorization: apiKey } })).json<{ calls: CallDetail[] }>();
      assert.equal(calls.calls[0]?.status, "error");
      assert.equal(calls.calls[0]?.disconnection_reason, "error_provider");
    }
    const chat = await h.request({ method: "POST", url: "/chat", headers: { authorization: apiKey }, payload: { thread_id: threadId, message: "What are your opening hours?", service_config_name: "support" } });
    assert.equal(chat.status, 200);
    await placeCall(h, apiKey, threadId, projectId);
  });

  test("at voice.max_call_seconds Parley ends the call, hangs it up at Twilio and closes its stream", async () => {
    const { h, apiKey, projectId, threadId } = await setUp({ max_call_seconds: 1 });
    const { callId, callSid, stream } = await placeCall(h, apiKey, threadId, projectId);
    const media = await TwilioStream.open(localStream(h, stream.url));
    media.start(accountSid, callSid, stream.token);
    const call = await waitForCall(h.request, apiKey, callId, (detail) => detail.status === "ended", 10_000);
    assert.equal(call.disconnection_reason, "max_duration_reached");
    assert.equal((await media.waitClosed()).code, 1000, "Parley closes the stream");
    const hangUp = () => twilio.forms.find((form) => form.path === `/2010-04-01/Accounts/${accountSid}/Calls/${callSid}.json`);
    await eventually(() => hangUp() !== undefined, { what: "the hang-up at Twilio" });
    assert.equal(hangUp()?.form.get("Status"), "completed");
  });

  test("DELETE ends an ongoing call through the REST API (Status=completed) as manual_stopped and keeps its recording", async () => {
    const { h, apiKey, projectId, threadId } = await setUp();
    const { callId, callSid, stream } = await placeCall(h, apiKey, threadId, projectId);
    const media = await TwilioStream.open(localStream(h, stream.url));
    media.start(accountSid, callSid, stream.token);
    await waitForCall(h.request, apiKey, callId, (detail) => detail.status === "ongoing");
    media.speak(speech.subarray(0, 8000));
    await sleep(100);
    const deleted = await h.request({ method: "DELETE", url: `/voice/${threadId}/phone-call`, headers: { authorization: apiKey } });
    assert.equal(deleted.status, 200);
    assert.equal((await media.waitClosed()).code, 1000, "Parley closes the stream");
    const deadline = Date.now() + 5000;
    const hangUp = () => twilio.forms.find((form) => form.path === `/2010-04-01/Accounts/${accountSid}/Calls/${callSid}.json`);
    while (!hangUp() && Date.now() < deadline) await sleep(20);
    assert.equal(hangUp()?.form.get("Status"), "completed");
    const call = await waitForCall(h.request, apiKey, callId, (detail) => detail.recording_url !== null);
    assert.equal(call.status, "ended");
    assert.equal(call.disconnection_reason, "manual_stopped");
    assert.equal((await status(h, callId, callSid, "completed")).status, 204, "Twilio's own completed callback comes later and changes nothing");
    const after = (await h.request({ method: "GET", url: `/calls/${callId}`, headers: { authorization: apiKey } })).json<CallDetail>();
    assert.equal(after.disconnection_reason, "manual_stopped");
  });
}, telephonySuite());
