import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { acmeAgent } from "../../support/fixtures.js";
import { accountId, sleep, TestSocket, waitForCall, type CallDetail } from "../../voice-calls/support.js";
import { RetellLlmClient, signedWebhook, startFakeRetell, type FakeRetell } from "./fake-retell.js";
import { espeakMulaw, signedStatus, startFakeTwilio, streamOf, TwilioStream, type FakeTwilio } from "./fake-twilio.js";
import { forEachDatabase, type Harness } from "../../support/harness.js";
import { publicBaseUrl, telephonySuite } from "./support.js";

/**
 * What every voice provider must do through Parley's interface, whatever carries the call: the same states and
 * events, one active phone call per thread, DELETE, scheduling, the calls list and usage. Each provider gets a driver
 * that plays the far side of a call the way that provider's vendor would.
 */
interface CallContext {
  h: Harness;
  apiKey: string;
  callId: string;
}

interface Driver {
  name: string;
  config(): Record<string, unknown>;
  /** The callee answers; the call stays up until `hangUp`. */
  answer(call: CallContext): Promise<void>;
  /** The callee hangs up. */
  hangUp(call: CallContext): Promise<void>;
}

const accounts = [{ id: accountId, phone_numbers: ["+14155550100"] }];
const retellKey = "key_conformance_0123456789abcdef";
const twilioSid = `AC${"c0".repeat(16)}`;
const twilioToken = "twilio-conformance-token-0123456789";

let retell: FakeRetell;
let twilio: FakeTwilio;
let speech: Uint8Array;
const twilioStreams = new Map<string, TwilioStream>();
const retellStarts = new Map<string, number>();

async function providerCallId(h: Harness, callId: string): Promise<string> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const [row] = await h.app.db.query<{ provider_call_id: string | null }>("SELECT provider_call_id FROM calls WHERE id = $1", [callId]);
    if (row?.provider_call_id) return row.provider_call_id;
    if (Date.now() > deadline) throw new Error(`call ${callId} was never placed at its vendor`);
    await sleep(20);
  }
}

const drivers: Driver[] = [
  {
    name: "simulated",
    config: () => ({ voice: { accounts, simulated: { script: ["Hello?", "What are your opening hours?", "Bye."], ring_ms: 20, turn_ms: 500 } } }),
    answer: async ({ h, apiKey, callId }) => {
      await waitForCall(h.request, apiKey, callId, (call) => call.status === "ongoing");
    },
    // The simulated callee hangs up by itself after its script.
    hangUp: async () => undefined,
  },
  {
    name: "retell",
    config: () => ({ voice: { provider: "retell", accounts, retell: { api_key: retellKey, agent_id: "agent_conformance", api_base_url: retell.url } } }),
    answer: async ({ h, callId }) => {
      const retellId = await providerCallId(h, callId);
      const start = Date.now();
      retellStarts.set(callId, start);
      const { body, signature } = await signedWebhook(retellKey, "call_started", { call_id: retellId, call_status: "ongoing", start_timestamp: start });
      await h.request({ method: "POST", url: "/voice/retell/webhook", headers: { "content-type": "application/json", "x-retell-signature": signature }, payload: body });
      const llm = await RetellLlmClient.connect(h.wsBase, retellId);
      llm.send({ interaction_type: "response_required", response_id: 1, transcript: [{ role: "user", content: "What are your opening hours?" }] });
      await llm.response(1);
      llm.close();
    },
    hangUp: async ({ h, callId }) => {
      const retellId = await providerCallId(h, callId);
      const start = retellStarts.get(callId) ?? Date.now();
      const { body, signature } = await signedWebhook(retellKey, "call_ended", {
        call_id: retellId,
        call_status: "ended",
        start_timestamp: start,
        end_timestamp: Math.max(start + 1, Date.now()),
        disconnection_reason: "user_hangup",
        recording_url: "https://retell-recordings.example/conformance.wav",
        transcript_object: [{ role: "user", content: "What are your opening hours?", words: [] }],
      });
      await h.request({ method: "POST", url: "/voice/retell/webhook", headers: { "content-type": "application/json", "x-retell-signature": signature }, payload: body });
    },
  },
  {
    name: "twilio",
    config: () => ({ voice: { provider: "twilio", accounts, twilio: { account_sid: twilioSid, auth_token: twilioToken, api_base_url: twilio.url } } }),
    answer: async ({ h, apiKey, callId }) => {
      const callSid = await providerCallId(h, callId);
      const form = twilio.forms.find((candidate) => candidate.form.get("StatusCallback")?.endsWith(`/voice/twilio/status/${callId}`));
      const stream = streamOf(form?.form.get("Twiml") ?? "");
      const media = await TwilioStream.open(stream.url.replace(publicBaseUrl.replace(/^https/, "wss"), h.wsBase));
      twilioStreams.set(callId, media);
      media.start(twilioSid, callSid, stream.token);
      await waitForCall(h.request, apiKey, callId, (call) => call.status === "ongoing");
      media.speak(speech);
    },
    hangUp: async ({ h, callId }) => {
      const callSid = await providerCallId(h, callId);
      twilioStreams.get(callId)?.stop(twilioSid, callSid);
      const url = `${publicBaseUrl}/voice/twilio/status/${callId}`;
      const { body, signature } = signedStatus(twilioToken, url, { AccountSid: twilioSid, CallSid: callSid, CallStatus: "completed" });
      await h.request({ method: "POST", url: `/voice/twilio/status/${callId}`, headers: { "content-type": "application/x-www-form-urlencoded", "x-twilio-signature": signature }, payload: body });
    },
  },
];

before(async () => {
  retell = await startFakeRetell(retellKey);
  twilio = await startFakeTwilio(twilioSid, twilioToken);
  speech = await espeakMulaw("What are your opening hours?");
});
after(async () => {
  for (const stream of twilioStreams.values()) stream.close();
  await retell.close();
  await twilio.close();
});

forEachDatabase("voice provider conformance", (harness) => {
  for (const driver of drivers) {
    async function setUp() {
      const h = harness();
      const org = await h.organization({ agent: acmeAgent, pricing: { voice_minute_usd: 0.06 }, ...driver.config() });
      const threadId = await h.thread(org.apiKey);
      const create = (payload: Record<string, unknown> = {}) =>
        h.request({ method: "POST", url: `/voice/${threadId}/phone-call`, headers: { authorization: org.apiKey }, payload: { callee: "+14155552671", project_id: org.projectId, ...payload } });
      return { h, ...org, threadId, create };
    }

    test(`${driver.name}: a phone call goes queued, ongoing, ended; each step reaches the thread's events, the list, and usage once`, async () => {
      const { h, apiKey, threadId, create } = await setUp();
      const events = await TestSocket.open(`${h.wsBase}/threads/${threadId}/events`, { authorization: apiKey });
      const response = await create();
      assert.equal(response.status, 200, response.body);
      const callId = response.json<{ id: string }>().id;
      const statusOf = (event: Record<string, unknown>) => (event["type"] === "call.updated" ? (event["call"] as CallDetail).status : undefined);
      await events.next((event) => statusOf(event) === "queued");
      await driver.answer({ h, apiKey, callId });
      await events.next((event) => statusOf(event) === "ongoing");
      await driver.hangUp({ h, apiKey, callId });
      await events.next((event) => statusOf(event) === "ended");
      const call = await waitForCall(h.request, apiKey, callId, (detail) => detail.status === "ended");
      assert.equal(call.disconnection_reason, "user_hangup");
      assert.ok(call.duration_ms !== null && call.start_timestamp !== null && call.end_timestamp !== null);
      const list = (await h.request({ method: "GET", url: `/calls?thread_id=${threadId}`, headers: { authorization: apiKey } })).json<{ calls: CallDetail[] }>();
      assert.deepEqual(list.calls.map((listed) => [listed.id, listed.status, listed.direction]), [[callId, "ended", "outbound"]]);
      const usage = (await h.request({ method: "GET", url: `/threads/${threadId}`, headers: { authorization: apiKey } })).json<{ usage: { voice_minutes: number } }>().usage;
      assert.ok(Math.abs(usage.voice_minutes - call.duration_ms! / 60_000) < 1e-6, `billed once: ${usage.voice_minutes} min for ${call.duration_ms} ms`);
      events.close();
    });

    test(`${driver.name}: a thread holds one active phone call, and DELETE stops it as manual_stopped`, async () => {
      const { h, apiKey, threadId, create } = await setUp();
      const callId = (await create()).json<{ id: string }>().id;
      const second = await create();
      assert.equal(second.status, 409);
      assert.deepEqual(second.json(), { detail: "The thread already has an active phone call" });
      await driver.answer({ h, apiKey, callId });
      const deleted = await h.request({ method: "DELETE", url: `/voice/${threadId}/phone-call`, headers: { authorization: apiKey } });
      assert.deepEqual(deleted.json(), { response: "Call ended" });
      const call = await waitForCall(h.request, apiKey, callId, (detail) => detail.status === "ended");
      assert.equal(call.disconnection_reason, "manual_stopped");
      const again = await h.request({ method: "DELETE", url: `/voice/${threadId}/phone-call`, headers: { authorization: apiKey } });
      assert.equal(again.status, 404);
      assert.equal((await create()).status, 200, "the thread can call again");
    });

    test(`${driver.name}: a scheduled call waits, then is placed at its time; cancelling a scheduled call never reaches the vendor`, async () => {
      const { h, apiKey, threadId, create } = await setUp();
      const soon = await create({ scheduled_for: new Date(Date.now() + 1000).toISOString() });
      assert.equal(soon.json<{ status: string }>().status, "scheduled");
      const callId = soon.json<{ id: string }>().id;
      const placed = await waitForCall(h.request, apiKey, callId, (detail) => detail.status !== "scheduled");
      assert.ok(["queued", "ongoing", "ended"].includes(placed.status), placed.status);
      if (driver.name !== "simulated") await providerCallId(h, callId);
      await h.request({ method: "DELETE", url: `/voice/${threadId}/phone-call`, headers: { authorization: apiKey } });
      await waitForCall(h.request, apiKey, callId, (detail) => detail.status === "ended");

      const later = await create({ scheduled_for: new Date(Date.now() + 3_600_000).toISOString() });
      const laterId = later.json<{ id: string }>().id;
      const cancelled = await h.request({ method: "DELETE", url: `/voice/${threadId}/phone-call`, headers: { authorization: apiKey } });
      assert.equal(cancelled.status, 200);
      const call = await waitForCall(h.request, apiKey, laterId, (detail) => detail.status === "ended");
      assert.equal(call.disconnection_reason, "cancelled");
      const [row] = await h.app.db.query<{ provider_call_id: string | null }>("SELECT provider_call_id FROM calls WHERE id = $1", [laterId]);
      assert.equal(row?.provider_call_id, null);
    });
  }
}, telephonySuite());
