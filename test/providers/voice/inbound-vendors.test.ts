import assert from "node:assert/strict";
import { randomInt } from "node:crypto";
import { after, before, test } from "node:test";
import { decodeWav } from "../../../src/providers/speech/audio.js";
import { startFakeOpenAi } from "../../support/fake-llm-servers.js";
import { acmeAgent } from "../../support/fixtures.js";
import { forEachDatabase, type Harness } from "../../support/harness.js";
import { eventually, pollUntil } from "../../support/polling.js";
import { accountId, waitForCall, type CallDetail } from "../../voice-calls/support.js";
import { RetellLlmClient, retellCallId, signedWebhook, startFakeRetell, type FakeRetell } from "./fake-retell.js";
import { espeakMulaw, ringNumber, sid, signedStatus, startFakeTwilio, streamOf, TwilioStream, type FakeTwilio } from "./fake-twilio.js";
import { publicBaseUrl, telephonySuite } from "./support.js";

const caller = "+14155552671";
const greeting = "Acme clinic, how can I help?";
const accountSid = `AC${"2e".repeat(16)}`;
const authToken = "twilio-inbound-auth-token-0123456789";
const retellKey = "key_inbound_0123456789abcdef0123456";
const retellAgent = "agent_inbound_c4d5e6";
/** The voice webhook configured on the Twilio numbers, which their signatures cover. */
const webhookUrl = `${publicBaseUrl}/voice/twilio/inbound`;
const rejected = '<?xml version="1.0" encoding="UTF-8"?><Response><Reject/></Response>';
const busy = '<?xml version="1.0" encoding="UTF-8"?><Response><Reject reason="busy"/></Response>';

/** A number no other test's project holds: the number a vendor's caller dialed is looked up across organizations. */
function freshNumber(): string {
  return `+1628${String(randomInt(0, 10_000_000)).padStart(7, "0")}`;
}

interface TwilioLine {
  number: string;
  token?: string;
  accountSid?: string;
  inbound?: boolean;
  agent?: Record<string, unknown>;
}

function twilioProject(twilio: FakeTwilio, line: TwilioLine) {
  return {
    agent: line.agent ?? acmeAgent,
    pricing: { voice_minute_usd: 0.06 },
    voice: {
      provider: "twilio",
      accounts: [{ id: accountId, phone_numbers: [line.number] }],
      twilio: { account_sid: line.accountSid ?? accountSid, auth_token: line.token ?? authToken, api_base_url: twilio.url },
      ...(line.inbound === false ? {} : { inbound: { enabled: true, greeting } }),
    },
  };
}

function retellProject(retell: FakeRetell, number: string, options: { inbound?: boolean } = {}) {
  return {
    agent: acmeAgent,
    pricing: { voice_minute_usd: 0.06 },
    voice: {
      provider: "retell",
      accounts: [{ id: accountId, phone_numbers: [number] }],
      retell: { api_key: retellKey, agent_id: retellAgent, api_base_url: retell.url },
      ...(options.inbound === false ? {} : { inbound: { enabled: true, greeting } }),
    },
  };
}

forEachDatabase(
  "inbound calls through Twilio and Retell",
  (harness: () => Harness) => {
    let twilio: FakeTwilio;
    let retell: FakeRetell;
    let question: Uint8Array;
    before(async () => {
      twilio = await startFakeTwilio(accountSid, authToken);
      retell = await startFakeRetell(retellKey);
      question = await espeakMulaw("Hello. What are your opening hours?");
    });
    after(async () => {
      await twilio.close();
      await retell.close();
    });

    const get = <T>(h: Harness, apiKey: string, url: string) => h.request({ method: "GET", url, headers: { authorization: apiKey } }).then((response) => response.json<T>());

    /** Twilio dialing `to` for `from`: the voice webhook, signed with `token` for the account `sid` unless told otherwise. */
    async function ring(h: Harness, to: string, options: { from?: string; token?: string; accountSid?: string; signature?: string; callSid?: string } = {}) {
      const callSid = options.callSid ?? sid("CA");
      const call = { accountSid: options.accountSid ?? accountSid, callSid, from: options.from ?? caller, to };
      const answer = await ringNumber(`${h.wsBase.replace(/^ws/, "http")}/voice/twilio/inbound`, webhookUrl, options.token ?? authToken, call, options.signature);
      return { ...answer, callSid };
    }

    /** The call a `<Connect><Stream>` answer connects: its id (the stream's last path segment) and stream. */
    function connected(body: string): { callId: string; url: string; token: string } {
      const stream = streamOf(body);
      return { ...stream, callId: decodeURIComponent(stream.url.split("/").at(-1) ?? "") };
    }

    function localStream(h: Harness, url: string): string {
      return url.replace(publicBaseUrl.replace(/^https/, "wss"), h.wsBase);
    }

    async function recordsOf(h: Harness, organizationId: string): Promise<{ calls: number; threads: number }> {
      const [row] = await h.app.db.query<{ calls: number; threads: number }>(
        "SELECT (SELECT count(*) FROM calls WHERE organization_id = $1)::int AS calls, (SELECT count(*) FROM threads WHERE organization_id = $1)::int AS threads",
        [organizationId],
      );
      return row ?? { calls: -1, threads: -1 };
    }

    async function callStatuses(h: Harness, threadId: string): Promise<string[]> {
      const rows = await h.app.db.query<{ payload: { call: { status: string } } }>("SELECT payload FROM thread_events WHERE thread_id = $1 AND type = 'call.updated' ORDER BY seq", [threadId]);
      return rows.map((row) => row.payload.call.status);
    }

    /**
     * A caller on an answered Twilio call: the stream opened and started as Twilio does, the line running, and the
     * agent's greeting played before the caller says a word.
     */
    async function pickUp(h: Harness, body: string, callSid: string): Promise<TwilioStream> {
      const stream = connected(body);
      const media = await TwilioStream.open(localStream(h, stream.url));
      media.start(accountSid, callSid, stream.token);
      media.startLine();
      await eventually(() => media.sentAudio().length > 4000 && media.playedOut(), { what: "the greeting to be played", timeoutMs: 60_000 });
      return media;
    }

    /** The caller asks until the agent has answered (the offline recognizer hears a telephone line roughly). */
    async function askUntilAnswered(media: TwilioStream, answered: () => Promise<boolean>): Promise<void> {
      for (let attempt = 0; ; attempt++) {
        await media.say(question);
        const heard = await eventually(answered, { what: "the agent's answer", timeoutMs: 30_000 }).then(() => true, () => false);
        if (heard) break;
        assert.ok(attempt < 2, "the agent answered nothing the caller said in three tries");
      }
      await eventually(() => media.playedOut(), { what: "the answer to be played", timeoutMs: 60_000 });
    }

    test("a Twilio call to a project's number is answered with <Connect><Stream>, greeted first, heard on μ-law, and complete at ended", async () => {
      const h = harness();
      const number = freshNumber();
      const { apiKey } = await h.organization(twilioProject(twilio, { number }));
      const rang = await ring(h, number);
      assert.equal(rang.status, 200, rang.body);
      assert.match(rang.contentType, /^text\/xml/);
      assert.match(rang.body, /^<\?xml version="1.0" encoding="UTF-8"\?><Response><Connect><Stream url="[^"]+"><Parameter name="token" value="[^"]+"\/><\/Stream><\/Connect><\/Response>$/);
      const { callId, url } = connected(rang.body);
      assert.equal(url, `wss://parley.example.test/voice/twilio/media/${callId}`);

      const answered = await get<CallDetail>(h, apiKey, `/calls/${callId}`);
      assert.deepEqual(
        [answered.status, answered.call_type, answered.direction, answered.from_number, answered.to_number, answered.conversation_id],
        ["ongoing", "phone_call", "inbound", caller, number, 1],
        "answered at once, in the caller's new conversation",
      );
      assert.equal((await get<{ id: string }>(h, apiKey, `/threads/by-alias/${encodeURIComponent(caller)}`)).id, answered.thread_id);

      const media = await pickUp(h, rang.body, rang.callSid);
      await waitForCall(h.request, apiKey, callId, (call) => call.transcript === `Agent: ${greeting}`);
      await askUntilAnswered(media, async () => /Agent: We are open from 9 to 5/.test((await get<CallDetail>(h, apiKey, `/calls/${callId}`)).transcript ?? ""));
      media.stop(accountSid, rang.callSid);

      const read = () => get<CallDetail>(h, apiKey, `/calls/${callId}`);
      const ended = await pollUntil(read, (call) => call.status !== "ongoing", { what: "the call to end", timeoutMs: 30_000, intervalMs: 5 });
      assert.equal(ended.status, "ended", JSON.stringify(ended));
      assert.equal(ended.disconnection_reason, "user_hangup");
      assert.ok(ended.recording_url, "the recording is there as the call shows ended");
      const [first, ...rest] = ended.transcript_object ?? [];
      assert.deepEqual([first?.role, first?.content], ["agent", greeting]);
      assert.ok((first?.words.length ?? 0) > 0, "the greeting has word timings from its audio");
      assert.ok(rest.some((entry) => entry.role === "user" && entry.words.length > 0), JSON.stringify(ended.transcript_object));
      assert.ok(rest.some((entry) => entry.role === "agent" && /open from 9 to 5/.test(entry.content)), JSON.stringify(ended.transcript_object));
      const recordingUrl = new URL(ended.recording_url);
      const wav = await h.app.server.inject({ method: "GET", url: recordingUrl.pathname + recordingUrl.search });
      assert.equal(wav.statusCode, 200);
      const audio = decodeWav(wav.rawPayload);
      const recordedMs = (audio.samples.length * 1000) / audio.sampleRate;
      assert.ok(Math.abs(recordedMs - (ended.duration_ms ?? 0)) <= 250, `the recording (${recordedMs} ms) lasts as long as the call (${ended.duration_ms} ms)`);

      // The number's "call status changes" webhook names the call by its CallSid; Twilio's CallDuration is billed.
      const statusUrl = `${publicBaseUrl}/voice/twilio/status`;
      const completed = signedStatus(authToken, statusUrl, { AccountSid: accountSid, CallSid: rang.callSid, CallStatus: "completed", CallDuration: "9", Direction: "inbound", From: caller, To: number, ApiVersion: "2010-04-01" });
      const callback = await h.request({ method: "POST", url: "/voice/twilio/status", headers: { "content-type": "application/x-www-form-urlencoded", "x-twilio-signature": completed.signature }, payload: completed.body });
      assert.equal(callback.status, 204, callback.body);
      const forged = signedStatus("another-auth-token", statusUrl, { AccountSid: accountSid, CallSid: rang.callSid, CallStatus: "completed", CallDuration: "900" });
      const refused = await h.request({ method: "POST", url: "/voice/twilio/status", headers: { "content-type": "application/x-www-form-urlencoded", "x-twilio-signature": forged.signature }, payload: forged.body });
      assert.equal(refused.status, 403);
      const thread = await get<{ usage: { voice_minutes: number; voice_cost: number } }>(h, apiKey, `/threads/${answered.thread_id}`);
      assert.equal(thread.usage.voice_minutes, Math.round((9 / 60) * 1e6) / 1e6, "usage follows Twilio's CallDuration, on the caller's thread");

      assert.deepEqual((await get<{ calls: { id: string }[] }>(h, apiKey, "/calls?direction=inbound")).calls.map((call) => call.id), [callId]);
      assert.deepEqual((await get<{ calls: unknown[] }>(h, apiKey, "/calls?direction=outbound")).calls, []);
      const statuses = await callStatuses(h, answered.thread_id);
      assert.equal(statuses[0], "ongoing", JSON.stringify(statuses));
      assert.ok(statuses.includes("ended") && !statuses.includes("queued"), JSON.stringify(statuses));
    });

    test("two Twilio calls from one number land in one thread, in two conversations, and the second sees the first's history", async () => {
      const model = await startFakeOpenAi({ chunks: ["Noted, see you Tuesday."] });
      try {
        const h = harness();
        const number = freshNumber();
        const agent = { ...acmeAgent, provider: "openai", base_url: model.url, model: "fake", api_key: "sk-fake" };
        const { apiKey } = await h.organization(twilioProject(twilio, { number, agent }));
        const calls: CallDetail[] = [];
        let requestsBeforeSecond = 0;
        for (const round of [1, 2]) {
          if (round === 2) requestsBeforeSecond = model.requests.length;
          const rang = await ring(h, number);
          const { callId } = connected(rang.body);
          const media = await pickUp(h, rang.body, rang.callSid);
          await askUntilAnswered(media, async () => ((await get<CallDetail>(h, apiKey, `/calls/${callId}`)).transcript ?? "").includes("Agent: Noted, see you Tuesday."));
          media.stop(accountSid, rang.callSid);
          calls.push(await waitForCall(h.request, apiKey, callId, (call) => call.status === "ended", 30_000));
        }
        const [first, second] = calls as [CallDetail, CallDetail];
        assert.equal(second.thread_id, first.thread_id);
        assert.deepEqual([first.conversation_id, second.conversation_id], [1, 2]);
        const history = await get<{ messages: { conversation_id: number }[] }>(h, apiKey, `/threads/${first.thread_id}/messages?limit=100`);
        assert.deepEqual([...new Set(history.messages.map((message) => message.conversation_id))].sort(), [1, 2]);
        // The model also writes each call's analysis once it ended; the second call's first turn is the first other request.
        const prompt = model.requests
          .slice(requestsBeforeSecond)
          .map((request) => JSON.stringify(request.json))
          .find((json) => !json.includes("You analyze a finished phone call"));
        assert.ok(prompt?.includes("Noted, see you Tuesday."), `the second call's first prompt holds the first call's answer: ${prompt}`);
      } finally {
        await model.close();
      }
    });

    test("two simultaneous first Twilio calls from a new number make one thread; the one that finds the line taken hears busy", async () => {
      const h = harness();
      const number = freshNumber();
      const { apiKey, organizationId } = await h.organization(twilioProject(twilio, { number }));
      const answers = await Promise.all([ring(h, number), ring(h, number)]);
      assert.deepEqual(answers.map((answer) => answer.status), [200, 200]);
      const bodies = answers.map((answer) => (answer.body.includes("<Stream") ? "connect" : answer.body));
      assert.deepEqual(bodies.sort(), [busy, "connect"].sort(), answers.map((answer) => answer.body).join("\n"));
      const threads = await get<{ threads: { id: string; alias: string | null }[] }>(h, apiKey, "/threads?limit=10");
      assert.deepEqual(threads.threads.map((thread) => thread.alias), [caller]);
      assert.deepEqual(await recordsOf(h, organizationId), { calls: 1, threads: 1 });
      const ended = await h.request({ method: "DELETE", url: `/voice/${threads.threads[0]!.id}/phone-call`, headers: { authorization: apiKey } });
      assert.equal(ended.status, 200);
    });

    test("a voice webhook delivered again gets the same answer, and the call's media is taken by its first stream only", async () => {
      const h = harness();
      const number = freshNumber();
      const { apiKey, organizationId } = await h.organization(twilioProject(twilio, { number }));
      const first = await ring(h, number);
      const again = await ring(h, number, { callSid: first.callSid });
      assert.equal(again.body, first.body);
      assert.deepEqual(await recordsOf(h, organizationId), { calls: 1, threads: 1 });
      const stream = connected(first.body);
      const media = await TwilioStream.open(localStream(h, stream.url));
      media.start(accountSid, first.callSid, stream.token);
      await waitForCall(h.request, apiKey, stream.callId, (call) => (call.transcript ?? "").startsWith("Agent:"), 30_000);
      const second = await TwilioStream.open(localStream(h, stream.url));
      second.start(accountSid, first.callSid, stream.token);
      assert.equal((await second.waitClosed()).code, 4403, "a second stream for a call already carried is refused");
      media.stop(accountSid, first.callSid);
      assert.equal((await waitForCall(h.request, apiKey, stream.callId, (call) => call.status !== "ongoing")).status, "ended");
    });

    test("a Twilio webhook with a wrong, missing or misplaced signature, or another account's, is 403 and creates nothing", async () => {
      const h = harness();
      const number = freshNumber();
      const { organizationId } = await h.organization(twilioProject(twilio, { number }));
      for (const [what, options] of [
        ["another token", { token: "not-the-auth-token-at-all" }],
        ["no signature", { signature: "" }],
        ["a signature of another call's form", { signature: "bm90IGEgc2lnbmF0dXJlIGF0IGFsbA==" }],
        ["another account's sid", { accountSid: `AC${"3f".repeat(16)}` }],
      ] as const) {
        const answer = await ring(h, number, options);
        assert.deepEqual([answer.status, answer.body], [403, '{"detail":"Invalid signature"}'], what);
      }
      assert.deepEqual(await recordsOf(h, organizationId), { calls: 0, threads: 0 });
    });

    test("a number no project holds, a project that does not answer calls, and a caller without a number are rejected with no record", async () => {
      const h = harness();
      assert.deepEqual(await ring(h, freshNumber()).then((answer) => [answer.status, answer.body]), [200, rejected]);
      const silent = freshNumber();
      const off = await h.organization(twilioProject(twilio, { number: silent, inbound: false }));
      assert.deepEqual(await ring(h, silent).then((answer) => [answer.status, answer.body]), [200, rejected]);
      assert.deepEqual(await recordsOf(h, off.organizationId), { calls: 0, threads: 0 });
      const open = freshNumber();
      const on = await h.organization(twilioProject(twilio, { number: open }));
      // Twilio's From for a withheld number is not a phone number: there is no alias to find the caller's thread by.
      assert.deepEqual(await ring(h, open, { from: "+266696687" }).then((answer) => [answer.status, answer.body]), [200, rejected]);
      assert.deepEqual(await recordsOf(h, on.organizationId), { calls: 0, threads: 0 });
    });

    test("another organization's number never reaches this organization's project, and its token cannot sign for it", async () => {
      const h = harness();
      const ownNumber = freshNumber();
      const theirNumber = freshNumber();
      const theirs = { token: "their-twilio-auth-token-9876543210", accountSid: `AC${"4a".repeat(16)}` };
      const mine = await h.organization(twilioProject(twilio, { number: ownNumber }));
      const other = await h.organization(twilioProject(twilio, { number: theirNumber, ...theirs }));
      assert.equal((await ring(h, theirNumber)).status, 403, "my token cannot sign for their number");
      assert.equal((await ring(h, theirNumber, { accountSid: theirs.accountSid })).status, 403, "nor in their account's name");
      assert.equal((await ring(h, ownNumber, theirs)).status, 403, "nor theirs for mine");
      assert.deepEqual(await recordsOf(h, mine.organizationId), { calls: 0, threads: 0 });
      assert.deepEqual(await recordsOf(h, other.organizationId), { calls: 0, threads: 0 });

      const rang = await ring(h, theirNumber, theirs);
      const { callId } = connected(rang.body);
      assert.equal((await get<CallDetail>(h, other.apiKey, `/calls/${callId}`)).to_number, theirNumber);
      assert.equal((await h.request({ method: "GET", url: `/calls/${callId}`, headers: { authorization: mine.apiKey } })).status, 404);
      assert.deepEqual(await recordsOf(h, mine.organizationId), { calls: 0, threads: 0 });

      // A number that two organizations both hold goes to the one whose account signed the call.
      const shared = freshNumber();
      const first = await h.organization(twilioProject(twilio, { number: shared }));
      const second = await h.organization(twilioProject(twilio, { number: shared, ...theirs }));
      const toSecond = connected((await ring(h, shared, theirs)).body);
      assert.equal((await get<CallDetail>(h, second.apiKey, `/calls/${toSecond.callId}`)).direction, "inbound");
      assert.deepEqual(await recordsOf(h, first.organizationId), { calls: 0, threads: 0 });
      const toFirst = connected((await ring(h, shared)).body);
      assert.equal((await get<CallDetail>(h, first.apiKey, `/calls/${toFirst.callId}`)).direction, "inbound");
      assert.deepEqual(await recordsOf(h, second.organizationId), { calls: 1, threads: 1 });
    });

    async function retellHook(h: Harness, event: string, call: Record<string, unknown>, key = retellKey) {
      const { body, signature } = await signedWebhook(key, event, call);
      return h.request({ method: "POST", url: "/voice/retell/webhook", headers: { "content-type": "application/json", "x-retell-signature": signature }, payload: body });
    }

    test("a Retell inbound call: call_started makes it, its Custom LLM socket greets the caller and answers, call_ended completes it", async () => {
      const h = harness();
      const number = freshNumber();
      const { apiKey } = await h.organization(retellProject(retell, number));
      const retellId = retellCallId();
      const start = Date.now();
      const announced = { call_id: retellId, call_type: "phone_call", agent_id: retellAgent, direction: "inbound", from_number: caller, to_number: number, call_status: "ongoing", start_timestamp: start };
      assert.equal((await retellHook(h, "call_started", announced)).status, 204);
      const [listed] = (await get<{ calls: CallDetail[] }>(h, apiKey, "/calls?direction=inbound")).calls;
      assert.ok(listed);
      assert.deepEqual([listed.status, listed.from_number, listed.to_number, listed.conversation_id], ["ongoing", caller, number, 1]);
      assert.equal((await get<{ id: string }>(h, apiKey, `/threads/by-alias/${encodeURIComponent(caller)}`)).id, listed.thread_id);

      const llm = await RetellLlmClient.connect(h.wsBase, retellId);
      const opening = await llm.response(0);
      assert.deepEqual([opening.text, opening.endCall], [greeting, false], "the begin message is the greeting: the agent speaks first");
      llm.send({ interaction_type: "response_required", response_id: 1, transcript: [{ role: "agent", content: greeting }, { role: "user", content: "What are your opening hours?" }] });
      assert.equal((await llm.response(1)).text, "We are open from 9 to 5 on weekdays.");

      const ended = await retellHook(h, "call_ended", {
        ...announced,
        call_status: "ended",
        end_timestamp: start + 6_000,
        disconnection_reason: "user_hangup",
        recording_url: "https://retell-recordings.example/inbound.wav",
        transcript_object: [
          { role: "agent", content: greeting, words: [{ word: "Acme", start: 0.2, end: 0.5 }] },
          { role: "user", content: "What are your opening hours?", words: [{ word: "What", start: 2.0, end: 2.2 }] },
          { role: "agent", content: "We are open from 9 to 5 on weekdays.", words: [{ word: "We", start: 3.5, end: 3.6 }] },
        ],
      });
      assert.equal(ended.status, 204);
      await llm.waitClosed().catch(() => undefined);
      const call = await waitForCall(h.request, apiKey, listed.id, (detail) => detail.status === "ended");
      assert.deepEqual([call.direction, call.disconnection_reason, call.duration_ms, call.recording_url], ["inbound", "user_hangup", 6_000, "https://retell-recordings.example/inbound.wav"]);
      assert.equal(call.transcript, `Agent: ${greeting}\nUser: What are your opening hours?\nAgent: We are open from 9 to 5 on weekdays.`);
      const thread = await get<{ usage: { voice_minutes: number } }>(h, apiKey, `/threads/${listed.thread_id}`);
      assert.equal(thread.usage.voice_minutes, 0.1, "Retell's six seconds, billed on the caller's thread");
      const statuses = await callStatuses(h, listed.thread_id);
      assert.equal(statuses[0], "ongoing", JSON.stringify(statuses));
      assert.ok(statuses.includes("ended") && !statuses.includes("queued"), JSON.stringify(statuses));
    });

    test("a Retell inbound call that nothing may answer creates nothing, and its socket, like any unannounced one, is refused with 4404", async () => {
      const h = harness();
      const number = freshNumber();
      const silent = freshNumber();
      const on = await h.organization(retellProject(retell, number));
      const off = await h.organization(retellProject(retell, silent, { inbound: false }));
      const announce = (to: string, overrides: Record<string, unknown> = {}) => ({
        call_id: retellCallId(),
        agent_id: retellAgent,
        direction: "inbound",
        from_number: caller,
        to_number: to,
        call_status: "ongoing",
        start_timestamp: Date.now(),
        ...overrides,
      });
      const forged = announce(number);
      assert.equal((await retellHook(h, "call_started", forged, "key_of_someone_else_0123456789abcd")).status, 401);
      assert.equal((await retellHook(h, "call_started", announce(freshNumber()))).status, 401, "a number no project holds");
      const otherAgent = announce(number, { agent_id: "agent_parley_does_not_serve" });
      assert.equal((await retellHook(h, "call_started", otherAgent)).status, 204);
      const notAnswering = announce(silent);
      assert.equal((await retellHook(h, "call_started", notAnswering)).status, 204);
      assert.deepEqual(await recordsOf(h, on.organizationId), { calls: 0, threads: 0 });
      assert.deepEqual(await recordsOf(h, off.organizationId), { calls: 0, threads: 0 });
      for (const retellId of [forged.call_id, otherAgent.call_id, notAnswering.call_id, retellCallId()]) {
        const llm = await RetellLlmClient.connect(h.wsBase, retellId);
        assert.equal((await llm.waitClosed()).code, 4404);
      }
    });
  },
  telephonySuite(),
);
