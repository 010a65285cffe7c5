import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { startFakeOpenAi, type CapturedRequest, type FakeBehaviour, type FakeLlmServer } from "../support/fake-llm-servers.js";
import { acmeAgent } from "../support/fixtures.js";
import { startToolReceiver, type ToolReceiver } from "../support/tool-receiver.js";
import { forEachDatabase } from "../support/harness.js";
import { accountId, listen, TestSocket, voiceSuite, waitForCall } from "./support.js";

const SECRET = "tool-secret-0123456789-abcdef";

interface PromptMessage {
  role: string;
  content: unknown;
}

/** What the model was sent: its messages (OpenAI's chat format). */
function messagesOf(request: CapturedRequest): PromptMessage[] {
  return (request.json as { messages: PromptMessage[] }).messages;
}

const userTurns = (request: CapturedRequest) => messagesOf(request).filter((message) => message.role === "user").length;
const hasToolResults = (request: CapturedRequest) => messagesOf(request).some((message) => message.role === "tool");

/**
 * A model for a call whose callee says "Hello?", then asks to book, then hangs up: it greets, then calls `tool` (and,
 * once it has the result, says `answer`).
 */
function bookingModel(tool: string, answer: string) {
  return (request: CapturedRequest): FakeBehaviour => {
    if (hasToolResults(request)) return { chunks: [answer] };
    if (userTurns(request) < 2) return { chunks: ["Hello, this is Acme."] };
    return { chunks: ["Let me see."], toolCalls: [{ id: "call_1", name: tool, arguments: { day: "Tuesday" } }] };
  };
}

function toolsConfig(model: FakeLlmServer, tools: unknown[], systemPrompt = "You book visits for Acme.") {
  return {
    agent: { provider: "openai", base_url: model.url, model: "fake", api_key: "sk-fake", system_prompt: systemPrompt, tools, tool_secret: SECRET },
    voice: {
      accounts: [{ id: accountId, phone_numbers: ["+14155550100"] }],
      simulated: { script: ["Hello?", "Please book me for Tuesday.", "Thanks, bye."], ring_ms: 20, turn_ms: 30 },
    },
  };
}

const bookTool = (url: string) => ({
  name: "book_appointment",
  description: "Books a visit.",
  parameters: { type: "object", properties: { day: { type: "string" } }, required: ["day"] },
  url,
  speak_during_execution: "One moment while I book that.",
});

forEachDatabase("tools during calls", (h) => {
  let model: FakeLlmServer;
  let receiver: ToolReceiver;
  let base = "";
  before(async () => {
    base = await listen(h().app);
    model = await startFakeOpenAi();
    receiver = await startToolReceiver(SECRET);
  });
  after(async () => {
    await model.close();
    await receiver.close();
  });

  test("a phone call's appointment_opening_id and verification_code are the call's prompt variables; the opening is in each tool request, the code is sealed in the calls row and never returned", async () => {
    model.setBehaviour(bookingModel("book_appointment", "You are booked for Tuesday."));
    const { apiKey, projectId } = await h().organization(
      toolsConfig(model, [bookTool(`${receiver.url}/json`)], "Opening {{appointment_opening_id}}; the caller's code is {{verification_code}}."),
    );
    const threadId = await h().thread(apiKey);
    const requestsBefore = model.requests.length;
    const created = await h().request({
      method: "POST",
      url: `/voice/${threadId}/phone-call`,
      headers: { authorization: apiKey },
      payload: { callee: "+14155552671", project_id: projectId, appointment_opening_id: "opening-42", verification_code: "code-7311-secret" },
    });
    assert.equal(created.status, 200, created.body);
    const callId = created.json<{ id: string }>().id;
    assert.ok(!created.body.includes("code-7311-secret"));
    const ended = await waitForCall(h().request, apiKey, callId, (call) => call.status === "ended");
    assert.equal(ended.disconnection_reason, "user_hangup");

    const sent = model.requests.slice(requestsBefore);
    const system = messagesOf(sent[0]!)[0];
    assert.equal(system?.role, "system");
    assert.match(String(system?.content), /^Opening opening-42; the caller's code is code-7311-secret\./);
    // The model is offered the http tool and end_call's kin only where they apply: here no end_call tool is configured.
    const offered = (sent[0]!.json as { tools: { function: { name: string } }[] }).tools.map((tool) => tool.function.name);
    assert.deepEqual(offered, ["book_appointment"]);

    const toolRequest = receiver.requests.find((request) => request.json["call"] !== null && (request.json["call"] as { id: string }).id === callId);
    assert.ok(toolRequest?.verified, "the receiver got a signed request naming the call");
    assert.deepEqual(toolRequest.json["call"], { id: callId, appointment_opening_id: "opening-42" });
    assert.equal(toolRequest.json["thread_id"], threadId);
    assert.deepEqual(toolRequest.json["arguments"], { day: "Tuesday" });
    assert.equal(typeof toolRequest.json["message_id"], "string", "the request names the caller's utterance it answers");

    const [row] = await h().database.db.query<{ appointment_opening_id: string; verification_code_sealed: string }>(
      "SELECT appointment_opening_id, verification_code_sealed FROM calls WHERE id = $1",
      [callId],
    );
    assert.equal(row?.appointment_opening_id, "opening-42");
    assert.ok(row?.verification_code_sealed && !row.verification_code_sealed.includes("7311"), "the code is stored sealed");
    const detail = await h().request({ method: "GET", url: `/calls/${callId}`, headers: { authorization: apiKey } });
    assert.equal(detail.status, 200);
    assert.ok(!detail.body.includes("code-7311-secret") && !detail.body.includes("verification_code"), detail.body);
    const listing = await h().request({ method: "GET", url: `/calls?thread_id=${threadId}`, headers: { authorization: apiKey } });
    assert.ok(!listing.body.includes("code-7311-secret"));

    // The agent's utterance carries its tool calls, as a chat reply does.
    const messages = await h().request({ method: "GET", url: `/threads/${threadId}/messages`, headers: { authorization: apiKey } });
    const items = messages.json<{ messages: { role: string; message: string; extras: Record<string, unknown> }[] }>().messages;
    const withTools = items.find((item) => item.role === "assistant" && Array.isArray(item.extras["tool_calls"]));
    assert.ok(withTools, messages.body);
    assert.equal(withTools.message, "Let me see. You are booked for Tuesday.");
    const [record] = withTools.extras["tool_calls"] as { name: string; status: string; result: unknown }[];
    assert.equal(record?.name, "book_appointment");
    assert.equal(record?.status, "ok");
    assert.deepEqual(record?.result, { status: "shipped", tool: "book_appointment" });
    const events = await h().database.db.query<{ payload: { call_id: string; tool_call: { name: string } } }>(
      "SELECT payload FROM thread_events WHERE thread_id = $1 AND type = 'tool.called'",
      [threadId],
    );
    assert.deepEqual(events.map((event) => [event.payload.call_id, event.payload.tool_call.name]), [[callId, "book_appointment"]]);

    // The code belongs to that call only: the thread's next call, placed without one, does not have it.
    const next = await h().request({ method: "POST", url: `/voice/${threadId}/phone-call`, headers: { authorization: apiKey }, payload: { callee: "+14155552671", project_id: projectId } });
    const nextId = next.json<{ id: string }>().id;
    const requestsOfNext = model.requests.length;
    await waitForCall(h().request, apiKey, nextId, (call) => call.status === "ended");
    const nextSystem = String(messagesOf(model.requests[requestsOfNext]!)[0]?.content);
    assert.match(nextSystem, /^Opening ; the caller's code is \./);
  });

  test("end_call ends a simulated call as agent_hangup once the agent's last words are said; the callee's next line is never heard", async () => {
    model.setBehaviour(bookingModel("end_call", "Goodbye!"));
    const { apiKey, projectId } = await h().organization(toolsConfig(model, [{ name: "end_call", type: "end_call" }]));
    const threadId = await h().thread(apiKey);
    const created = await h().request({ method: "POST", url: `/voice/${threadId}/phone-call`, headers: { authorization: apiKey }, payload: { callee: "+14155552671", project_id: projectId } });
    const callId = created.json<{ id: string }>().id;
    const ended = await waitForCall(h().request, apiKey, callId, (call) => call.status === "ended");
    assert.equal(ended.disconnection_reason, "agent_hangup");
    assert.equal(ended.transcript, "User: Hello?\nAgent: Hello, this is Acme.\nUser: Please book me for Tuesday.\nAgent: Let me see. Goodbye!");
  });

  test("transfer_call ends a simulated call as call_transfer; a web call is not offered it, and its end_call ends it as agent_hangup", async () => {
    model.setBehaviour(bookingModel("transfer_to_desk", "Transferring you now."));
    const tools = [{ name: "transfer_to_desk", type: "transfer_call", number: "+1 415 555 0199" }, { name: "end_call", type: "end_call" }, bookTool(`${receiver.url}/json`)];
    const { apiKey, projectId } = await h().organization(toolsConfig(model, tools));
    const threadId = await h().thread(apiKey);
    const requestsBefore = model.requests.length;
    const created = await h().request({ method: "POST", url: `/voice/${threadId}/phone-call`, headers: { authorization: apiKey }, payload: { callee: "+14155552671", project_id: projectId } });
    const callId = created.json<{ id: string }>().id;
    const ended = await waitForCall(h().request, apiKey, callId, (call) => call.status === "ended");
    assert.equal(ended.disconnection_reason, "call_transfer");
    const offered = (model.requests[requestsBefore]!.json as { tools: { function: { name: string } }[] }).tools.map((tool) => tool.function.name);
    assert.deepEqual(offered, ["transfer_to_desk", "end_call", "book_appointment"]);

    // A web call has no line to transfer: the model is offered end_call and the http tool, and end_call ends it.
    model.setBehaviour((request: CapturedRequest): FakeBehaviour => (hasToolResults(request) ? { chunks: [] } : { chunks: ["Goodbye!"], toolCalls: [{ name: "end_call", arguments: {} }] }));
    const events = await TestSocket.open(`${base}/threads/${threadId}/events`, { authorization: apiKey });
    const webRequestsBefore = model.requests.length;
    const queued = await h().request({ method: "POST", url: `/voice/${threadId}/web-call`, headers: { authorization: apiKey }, payload: { project_id: projectId } });
    assert.equal(queued.status, 200, queued.body);
    const ready = await events.next((event) => event["type"] === "web_call.ready");
    const webCallId = String(ready["call_id"]);
    const call = await TestSocket.open(`${base}/calls/${webCallId}/ws?token=${String(ready["access_token"])}`);
    await call.next((message) => message["type"] === "call.started");
    call.send({ type: "text", text: "That is all, thanks." });
    assert.equal((await call.next((message) => message["type"] === "agent_message"))["text"], "Goodbye!");
    assert.deepEqual(await call.next((message) => message["type"] === "call.ended"), { type: "call.ended", reason: "agent_hangup" });
    // The phone call's summary (its analysis) may reach the model after the web call began: the web call's turn is the one with its words.
    const webTurn = model.requests.slice(webRequestsBefore).find((request) => request.body.includes("That is all, thanks."));
    assert.ok(webTurn, "the web call's turn reached the model");
    const webOffered = (webTurn.json as { tools: { function: { name: string } }[] }).tools.map((tool) => tool.function.name);
    assert.deepEqual(webOffered, ["end_call", "book_appointment"]);
    assert.equal((await waitForCall(h().request, apiKey, webCallId, (detail) => detail.status === "ended")).disconnection_reason, "agent_hangup");
    events.close();
  });

  test("an inbound caller's request runs the project's tool as on an outbound call: signed, naming the call and the caller's thread, its answer spoken", async () => {
    model.setBehaviour(bookingModel("book_appointment", "You are booked for Tuesday."));
    const config = toolsConfig(model, [bookTool(`${receiver.url}/json`)]);
    const { apiKey, projectId } = await h().organization({ ...config, voice: { ...config.voice, inbound: { enabled: true, greeting: "Acme bookings, hello." } } });
    const answered = await h().request({ method: "POST", url: "/voice/simulated/inbound", headers: { authorization: apiKey }, payload: { project_id: projectId, from: "+14155552671" } });
    assert.equal(answered.status, 200, answered.body);
    const { id: callId, thread_id: threadId } = answered.json<{ id: string; thread_id: string }>();
    const ended = await waitForCall(h().request, apiKey, callId, (call) => call.status === "ended");
    assert.equal(ended.direction, "inbound");
    assert.equal(ended.disconnection_reason, "user_hangup");
    assert.match(ended.transcript ?? "", /^Agent: Acme bookings, hello\.\n/);
    assert.match(ended.transcript ?? "", /Agent: Let me see\. You are booked for Tuesday\./);

    const toolRequest = receiver.requests.find((request) => request.json["call"] !== null && (request.json["call"] as { id: string }).id === callId);
    assert.ok(toolRequest?.verified, "the receiver got a signed request naming the call");
    assert.equal(toolRequest.json["thread_id"], threadId);
    assert.deepEqual(toolRequest.json["arguments"], { day: "Tuesday" });
    const events = await h().database.db.query<{ payload: { call_id: string; tool_call: { name: string } } }>(
      "SELECT payload FROM thread_events WHERE thread_id = $1 AND type = 'tool.called'",
      [threadId],
    );
    assert.deepEqual(events.map((event) => [event.payload.call_id, event.payload.tool_call.name]), [[callId, "book_appointment"]]);
  });

  test("the built-in agent ends a call on the caller's farewell when the project gives it end_call, and not before", async () => {
    const { apiKey, projectId } = await h().organization({ agent: { ...acmeAgent, tools: [{ name: "hang_up", type: "end_call" }] }, voice: { accounts: [{ id: accountId, phone_numbers: ["+14155550100"] }] } });
    const threadId = await h().thread(apiKey);
    const events = await TestSocket.open(`${base}/threads/${threadId}/events`, { authorization: apiKey });
    await h().request({ method: "POST", url: `/voice/${threadId}/web-call`, headers: { authorization: apiKey }, payload: { project_id: projectId } });
    const ready = await events.next((event) => event["type"] === "web_call.ready");
    const callId = String(ready["call_id"]);
    const call = await TestSocket.open(`${base}/calls/${callId}/ws?token=${String(ready["access_token"])}`);
    await call.next((message) => message["type"] === "call.started");
    call.send({ type: "text", text: "What are your opening hours?" });
    assert.equal((await call.next((message) => message["type"] === "agent_message"))["text"], "We are open from 9 to 5 on weekdays.");
    call.send({ type: "text", text: "Great, thanks. Bye." });
    assert.equal((await call.next((message) => message["type"] === "agent_message"))["text"], "Thank you for calling. Goodbye!");
    assert.deepEqual(await call.next((message) => message["type"] === "call.ended"), { type: "call.ended", reason: "agent_hangup" });
    const ended = await waitForCall(h().request, apiKey, callId, (detail) => detail.status === "ended");
    assert.equal(ended.disconnection_reason, "agent_hangup");
    events.close();
  });
}, voiceSuite());
