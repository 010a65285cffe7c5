import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { startFakeOpenAi, type CapturedRequest, type FakeBehaviour, type FakeLlmServer } from "../../support/fake-llm-servers.js";
import { eventually } from "../../support/polling.js";
import { startToolReceiver, type ToolReceiver } from "../../support/tool-receiver.js";
import { accountId, waitForCall } from "../../voice-calls/support.js";
import { fliteMulaw, signedStatus, startFakeTwilio, streamOf, TwilioStream, type FakeTwilio } from "./fake-twilio.js";
import { RetellLlmClient, signedWebhook, startFakeRetell, type FakeRetell } from "./fake-retell.js";
import { forEachDatabase, type Harness } from "../../support/harness.js";
import { publicBaseUrl, telephonySuite } from "./support.js";

const SECRET = "tool-secret-0123456789-abcdef";
const accountSid = `AC${"2e".repeat(16)}`;
const authToken = "twilio-auth-token-0123456789abcdef";
const retellKey = "key_fedcba9876543210fedcba9876543210";

const hasToolResults = (request: CapturedRequest) => (request.json as { messages: { role: string }[] }).messages.some((message) => message.role === "tool");
const lastUserWords = (request: CapturedRequest) =>
  String((request.json as { messages: { role: string; content: unknown }[] }).messages.filter((message) => message.role === "user").at(-1)?.content ?? "");

/** A model that asks for the tool the caller's last words name ("book", "transfer", "bye"), saying `before` first. */
function toolModel(request: CapturedRequest): FakeBehaviour {
  if (hasToolResults(request)) return { chunks: lastUserWords(request).includes("book") ? ["You are booked for Tuesday."] : [] };
  const words = lastUserWords(request);
  if (words.includes("book")) return { chunks: ["Let me see."], toolCalls: [{ id: "call_book", name: "book_appointment", arguments: { day: "Tuesday" } }] };
  if (words.includes("bye")) return { chunks: ["Goodbye!"], toolCalls: [{ id: "call_end", name: "end_call", arguments: {} }] };
  return { chunks: ["I will put you through to the desk."], toolCalls: [{ id: "call_transfer", name: "transfer_to_desk", arguments: {} }] };
}

function agentWithTools(model: FakeLlmServer, receiver: ToolReceiver) {
  return {
    provider: "openai",
    base_url: model.url,
    model: "fake",
    api_key: "sk-fake",
    system_prompt: "You help callers of Acme.",
    tools: [
      {
        name: "book_appointment",
        parameters: { type: "object", properties: { day: { type: "string" } }, required: ["day"] },
        url: `${receiver.url}/json`,
        speak_during_execution: "One moment while I book that.",
      },
      { name: "end_call", type: "end_call" },
      { name: "transfer_to_desk", type: "transfer_call", number: "+14155550199" },
    ],
    tool_secret: SECRET,
  };
}

forEachDatabase("tools in telephone calls", (harness: () => Harness) => {
  let model: FakeLlmServer;
  let receiver: ToolReceiver;
  let twilio: FakeTwilio;
  let retell: FakeRetell;
  before(async () => {
    model = await startFakeOpenAi();
    model.setBehaviour(toolModel);
    receiver = await startToolReceiver(SECRET);
    twilio = await startFakeTwilio(accountSid, authToken);
    retell = await startFakeRetell(retellKey);
  });
  after(async () => {
    await model.close();
    await receiver.close();
    await twilio.close();
    await retell.close();
  });

  async function organization(h: Harness, voice: Record<string, unknown>) {
    const org = await h.organization({ agent: agentWithTools(model, receiver), voice: { accounts: [{ id: accountId, phone_numbers: ["+14155550100"] }], ...voice } });
    return { ...org, threadId: await h.thread(org.apiKey) };
  }

  test("Twilio: the agent's transfer_call updates the live call with <Dial> through the REST API once its words are played, and the call ends as call_transfer", async () => {
    const h = harness();
    const { apiKey, projectId, threadId } = await organization(h, { provider: "twilio", twilio: { account_sid: accountSid, auth_token: authToken, api_base_url: twilio.url } });
    const response = await h.request({ method: "POST", url: `/voice/${threadId}/phone-call`, headers: { authorization: apiKey }, payload: { callee: "+14155552671", project_id: projectId } });
    assert.equal(response.status, 200, response.body);
    const callId = response.json<{ id: string }>().id;
    const created = twilio.forms.at(-1)!;
    const [{ provider_call_id: callSid } = { provider_call_id: "" }] = await h.app.db.query<{ provider_call_id: string }>("SELECT provider_call_id FROM calls WHERE id = $1", [callId]);
    const { body, signature } = signedStatus(authToken, `${publicBaseUrl}/voice/twilio/status/${callId}`, { AccountSid: accountSid, CallSid: callSid, CallStatus: "in-progress" });
    await h.request({ method: "POST", url: `/voice/twilio/status/${callId}`, headers: { "content-type": "application/x-www-form-urlencoded", "x-twilio-signature": signature }, payload: body });
    const stream = streamOf(created.form.get("Twiml") ?? "");
    const media = await TwilioStream.open(stream.url.replace(publicBaseUrl.replace(/^https/, "wss"), h.wsBase));
    media.start(accountSid, callSid, stream.token);
    media.startLine();
    // Whatever the recognizer makes of it, the model below transfers the call.
    await media.say(await fliteMulaw("Can I talk to a person please?"));

    const isUpdate = (form: FakeTwilio["forms"][number]) => form.path.endsWith(`/Calls/${callSid}.json`) && form.form.has("Twiml");
    await eventually(() => twilio.forms.some(isUpdate), { what: "the call's update with <Dial>", timeoutMs: 60_000 });
    const update = twilio.forms.find(isUpdate)!;
    assert.equal(update.form.get("Twiml"), '<?xml version="1.0" encoding="UTF-8"?><Response><Dial>+14155550199</Dial></Response>');
    assert.equal(update.authorization, `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString("base64")}`);
    // The agent's words were sent before the update: the transfer waits for the reply to be played.
    assert.ok(media.received.some((frame) => frame.event === "media"), "the agent spoke before the transfer");
    // Twilio stops the stream as it moves the call to its <Dial>: that is not the caller hanging up.
    media.stop(accountSid, callSid);
    const ended = await waitForCall(h.request, apiKey, callId, (call) => call.status === "ended", 30_000);
    assert.equal(ended.disconnection_reason, "call_transfer");
    assert.match(ended.transcript ?? "", /^Agent: I will put you through to the desk\.$/m);
  });

  test("Retell: a socket turn with a tool speaks its filler while the tool runs, then the answer; transfer_call and end_call come back in the final response", async () => {
    const h = harness();
    const { apiKey, projectId, threadId } = await organization(h, { provider: "retell", retell: { api_key: retellKey, agent_id: "agent_tools", api_base_url: retell.url } });
    const response = await h.request({ method: "POST", url: `/voice/${threadId}/phone-call`, headers: { authorization: apiKey }, payload: { callee: "+14155552671", project_id: projectId, appointment_opening_id: "opening-7" } });
    assert.equal(response.status, 200, response.body);
    const callId = response.json<{ id: string }>().id;
    const retellId = retell.callIds.at(-1)!;
    const started = await signedWebhook(retellKey, "call_started", { call_id: retellId, call_status: "ongoing", start_timestamp: Date.now(), metadata: { parley_call_id: callId } });
    await h.request({ method: "POST", url: "/voice/retell/webhook", headers: { "content-type": "application/json", "x-retell-signature": started.signature }, payload: started.body });
    const llm = await RetellLlmClient.connect(h.wsBase, retellId);

    const transcript = [{ role: "user", content: "Please book me for Tuesday." }];
    llm.send({ interaction_type: "response_required", response_id: 1, transcript });
    const booked = await llm.response(1);
    assert.equal(booked.text, "Let me see. One moment while I book that. You are booked for Tuesday.");
    assert.equal(booked.endCall, false);
    assert.equal(booked.transferNumber, undefined);
    const toolRequest = receiver.requests.find((request) => (request.json["call"] as { id?: string } | null)?.id === callId);
    assert.deepEqual(toolRequest?.json["call"], { id: callId, appointment_opening_id: "opening-7" });

    transcript.push({ role: "agent", content: booked.text }, { role: "user", content: "Can I talk to a person?" });
    llm.send({ interaction_type: "response_required", response_id: 2, transcript });
    const transferred = await llm.response(2);
    assert.equal(transferred.text, "I will put you through to the desk.");
    assert.equal(transferred.transferNumber, "+14155550199");
    assert.equal(transferred.endCall, false);

    transcript.push({ role: "agent", content: transferred.text }, { role: "user", content: "Actually no, bye." });
    llm.send({ interaction_type: "response_required", response_id: 3, transcript });
    const goodbye = await llm.response(3);
    assert.equal(goodbye.text, "Goodbye!");
    assert.equal(goodbye.endCall, true);
    llm.close();

    const messages = await h.request({ method: "GET", url: `/threads/${threadId}/messages`, headers: { authorization: apiKey } });
    const agentTurns = messages.json<{ messages: { role: string; extras: { tool_calls?: { name: string }[] } }[] }>().messages.filter((message) => message.role === "assistant");
    assert.deepEqual(agentTurns.map((message) => message.extras.tool_calls?.map((call) => call.name)), [["book_appointment"], ["transfer_to_desk"], ["end_call"]]);
  });
}, telephonySuite());
