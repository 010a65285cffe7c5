import assert from "node:assert/strict";
import { randomInt } from "node:crypto";
import { after, before, test } from "node:test";
import type { App } from "../../../src/app.js";
import { CallsStore } from "../../../src/store/calls-store.js";
import { acmeAgent } from "../../support/fixtures.js";
import { forEachDatabase, injector, type Harness } from "../../support/harness.js";
import { eventually } from "../../support/polling.js";
import { accountId, waitForCall, type CallDetail } from "../../voice-calls/support.js";
import { RetellLlmClient, startFakeRetell, type FakeRetell } from "./fake-retell.js";
import { ringNumber, sid, startFakeTwilio, streamOf, type FakeTwilio } from "./fake-twilio.js";
import { publicBaseUrl, telephonySuite } from "./support.js";

const retellKey = "key_limits_0123456789abcdef01234567";
const retellAgent = "agent_limits_a1b2c3";
const accountSid = `AC${"4c".repeat(16)}`;
const authToken = "twilio-limits-auth-token-0123456789";

function retellProject(retell: FakeRetell, maxCallSeconds: number) {
  return {
    agent: acmeAgent,
    pricing: { voice_minute_usd: 0.06 },
    voice: {
      provider: "retell",
      accounts: [{ id: accountId, phone_numbers: ["+14155550100"] }],
      retell: { api_key: retellKey, agent_id: retellAgent, api_base_url: retell.url },
      max_call_seconds: maxCallSeconds,
    },
  };
}

/** A project answering Twilio calls to `number`, whose inbound calls last `inboundSeconds` at most (its other calls ten minutes). */
function twilioInboundProject(twilio: FakeTwilio, number: string, inboundSeconds: number) {
  return {
    agent: acmeAgent,
    pricing: { voice_minute_usd: 0.06 },
    voice: {
      provider: "twilio",
      accounts: [{ id: accountId, phone_numbers: [number] }],
      twilio: { account_sid: accountSid, auth_token: authToken, api_base_url: twilio.url },
      max_call_seconds: 600,
      inbound: { enabled: true, max_call_seconds: inboundSeconds },
    },
  };
}

/** A number no other test's project holds: the number a vendor's caller dialed is looked up across organizations. */
function freshNumber(): string {
  return `+1628${String(randomInt(0, 10_000_000)).padStart(7, "0")}`;
}

/** Another instance on the suite's database, with its own connections, listening on loopback as vendors need. */
async function listeningInstance(h: Harness): Promise<{ app: App; wsBase: string; request: ReturnType<typeof injector> }> {
  const app = await h.startApp({ ownPool: true });
  const wsBase = (await app.server.listen({ port: 0, host: "127.0.0.1" })).replace(/^http/, "ws");
  return { app, wsBase, request: injector(app) };
}

async function readCall(h: Harness, apiKey: string, callId: string): Promise<CallDetail> {
  return (await h.request({ method: "GET", url: `/calls/${callId}`, headers: { authorization: apiKey } })).json<CallDetail>();
}

/**
 * How many times the thread's events announced its call's end: the `call.updated` events showing it ended, less those
 * that came with its analysis (which announces the ended call again, in the same transaction as `call.analyzed`).
 */
async function endAnnouncements(h: Harness, threadId: string): Promise<number> {
  const rows = await h.app.db.query<{ type: string; payload: { call?: { status: string } } }>(
    "SELECT type, payload FROM thread_events WHERE thread_id = $1 AND type IN ('call.updated', 'call.analyzed')",
    [threadId],
  );
  return rows.filter((row) => row.type === "call.updated" && row.payload.call?.status === "ended").length - rows.filter((row) => row.type === "call.analyzed").length;
}

/**
 * A Retell phone call placed through `instance` and connected there by the caller's first turn on Retell's Custom LLM
 * socket: that instance holds the call's length limit. Then the instance is closed, taking its timer with it.
 */
async function callOnLostInstance(h: Harness, retell: FakeRetell, maxCallSeconds: number) {
  const { apiKey, projectId } = await h.organization(retellProject(retell, maxCallSeconds));
  const threadId = await h.thread(apiKey);
  const first = await listeningInstance(h);
  const placed = await first.request({ method: "POST", url: `/voice/${threadId}/phone-call`, headers: { authorization: apiKey }, payload: { callee: "+1 415 555 2671", project_id: projectId } });
  assert.equal(placed.status, 200, placed.body);
  const callId = placed.json<{ id: string }>().id;
  const retellId = retell.callIds.at(-1)!;
  const socket = await RetellLlmClient.connect(first.wsBase, retellId);
  socket.send({ interaction_type: "response_required", response_id: 1, transcript: [{ role: "user", content: "What are your opening hours?" }] });
  await socket.response(1);
  await first.app.close();
  // The test means a call that outlives the instance that armed its timer.
  assert.equal((await readCall(h, apiKey, callId)).status, "ongoing", "the first instance was gone before the call reached its limit");
  return { apiKey, threadId, callId, retellId };
}

const stopCalls = (retell: FakeRetell, retellId: string) => retell.requests.filter((request) => request.path === `/v2/stop-call/${retellId}`).length;

forEachDatabase(
  "call lengths: a live leg that comes back to another instance",
  (harness: () => Harness) => {
    let retell: FakeRetell;
    before(async () => {
      retell = await startFakeRetell(retellKey);
    });
    after(async () => {
      await retell.close();
    });

    // No sweep ends a call within this suite (its grace is ten minutes): only the timer the call's leg re-arms can.
    test("a Retell call whose socket reconnects to another instance, the first one gone, still ends at its max_call_seconds, the caller silent", async () => {
      const h = harness();
      const { apiKey, callId, retellId } = await callOnLostInstance(h, retell, 3);
      const again = await RetellLlmClient.connect(h.wsBase, retellId);
      const call = await waitForCall(h.request, apiKey, callId, (detail) => detail.status !== "ongoing", 30_000);
      assert.equal(call.status, "ended");
      assert.equal(call.disconnection_reason, "max_duration_reached");
      await eventually(() => stopCalls(retell, retellId) > 0, { what: "stop-call at Retell" });
      assert.equal((await again.waitClosed()).code, 1000, "the instance the socket came back to closes it");
    });
  },
  { ...telephonySuite(), voice: { ...telephonySuite().voice, lengthGraceMs: 600_000 } },
);

forEachDatabase(
  "call lengths: the sweep of calls whose instance is gone",
  (harness: () => Harness) => {
    let retell: FakeRetell;
    let twilio: FakeTwilio;
    before(async () => {
      retell = await startFakeRetell(retellKey);
      twilio = await startFakeTwilio(accountSid, authToken);
    });
    after(async () => {
      await retell.close();
      await twilio.close();
    });

    test("a Retell call whose instance is gone is ended at its limit by the other instances' sweeps, once, and stopped at Retell once", async () => {
      const h = harness();
      // Two instances sweep: the suite's own and this one.
      await h.startApp({ ownPool: true });
      const { apiKey, threadId, callId, retellId } = await callOnLostInstance(h, retell, 2);
      const call = await waitForCall(h.request, apiKey, callId, (detail) => detail.status !== "ongoing", 30_000);
      assert.equal(call.status, "ended");
      assert.equal(call.disconnection_reason, "max_duration_reached");
      await eventually(() => stopCalls(retell, retellId) > 0, { what: "stop-call at Retell" });
      assert.equal(stopCalls(retell, retellId), 1);
      assert.equal(await endAnnouncements(h, threadId), 1);
    });

    test("an inbound Twilio call whose carrying instance stopped beating is ended at the inbound limit by the sweep, once, and hung up at Twilio once", async () => {
      const h = harness();
      await h.startApp({ ownPool: true });
      const number = freshNumber();
      const { apiKey } = await h.organization(twilioInboundProject(twilio, number, 1));
      const callSid = sid("CA");
      const answer = await ringNumber(`${h.wsBase.replace(/^ws/, "http")}/voice/twilio/inbound`, `${publicBaseUrl}/voice/twilio/inbound`, authToken, {
        accountSid,
        callSid,
        from: "+14155552671",
        to: number,
      });
      assert.equal(answer.status, 200, answer.body);
      const callId = decodeURIComponent(streamOf(answer.body).url.split("/").at(-1) ?? "");
      // The instance Twilio's media reached took the call, as it does, and was lost: it never beats again, and no timer survives it.
      assert.ok(await new CallsStore(h.app.db).carry(callId, "a-lost-instance"));
      const call = await waitForCall(h.request, apiKey, callId, (detail) => detail.status !== "ongoing", 30_000);
      assert.equal(call.status, "ended");
      assert.equal(call.disconnection_reason, "max_duration_reached");
      const hangUps = () => twilio.forms.filter((form) => form.path.endsWith(`/Calls/${callSid}.json`) && form.form.get("Status") === "completed").length;
      await eventually(() => hangUps() > 0, { what: "the hang-up at Twilio" });
      assert.equal(hangUps(), 1);
      assert.equal(await endAnnouncements(h, call.thread_id), 1);
    });
  },
  { ...telephonySuite(), voice: { ...telephonySuite().voice, lengthGraceMs: 100 } },
);
