import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { FRAME_MS, framesOf } from "../../src/providers/speech/audio.js";
import { startFakeOpenAi, type CapturedRequest, type FakeBehaviour, type FakeLlmServer } from "../support/fake-llm-servers.js";
import { eventually } from "../support/polling.js";
import { concatSamples, espeakCli, silence } from "../support/speech-audio.js";
import { startToolReceiver, type ToolReceiver } from "../support/tool-receiver.js";
import { forEachDatabase } from "../support/harness.js";
import { accountId, audioVoiceSettings, listen, TestSocket, voiceSuite, waitForCall } from "./support.js";

const SECRET = "tool-secret-0123456789-abcdef";
const FILLER = "One moment please, while I look through the whole booking calendar for next week and find a free slot for you.";
const GOODBYE = "Thank you for calling, and have a lovely day. Goodbye!";

type Message = { role: string; content: unknown };
const messagesOf = (request: CapturedRequest) => (request.json as { messages: Message[] }).messages;
const hasToolResults = (request: CapturedRequest) => messagesOf(request).some((message) => message.role === "tool");
const userTurns = (request: CapturedRequest) => messagesOf(request).filter((message) => message.role === "user").length;

function agent(model: FakeLlmServer, tools: unknown[]) {
  return { provider: "openai", base_url: model.url, model: "fake", api_key: "sk-fake", system_prompt: "You help callers of Acme.", tools, tool_secret: SECRET };
}

/** Real audio is slow to run twice; PGlite exercises the same code as PostgreSQL for everything the pipeline adds. */
forEachDatabase(
  "tools in calls with real audio",
  (h) => {
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

    test("a simulated call ended by end_call ends as agent_hangup after the agent's last sentence has been played in full", async () => {
      // The second thing the callee says (whatever the recognizer makes of it) is answered with a goodbye and end_call.
      model.setBehaviour((request): FakeBehaviour => {
        if (hasToolResults(request)) return { chunks: [] };
        if (userTurns(request) < 2) return { chunks: ["Hello, this is Acme."] };
        return { chunks: [GOODBYE], toolCalls: [{ name: "end_call", arguments: {} }] };
      });
      const { apiKey, projectId } = await h().organization({
        agent: agent(model, [{ name: "end_call", type: "end_call" }]),
        voice: { accounts: [{ id: accountId, phone_numbers: ["+14155550100"] }], simulated: { script: ["Hello?", "That is all I needed, thanks.", "Are you still there?"], ring_ms: 20, turn_ms: 300 } },
      });
      const threadId = await h().thread(apiKey);
      const created = await h().request({ method: "POST", url: `/voice/${threadId}/phone-call`, headers: { authorization: apiKey }, payload: { callee: "+14155552671", project_id: projectId } });
      assert.equal(created.status, 200, created.body);
      const callId = created.json<{ id: string }>().id;
      const ended = await waitForCall(h().request, apiKey, callId, (call) => call.status !== "queued" && call.status !== "ongoing", 120_000);
      assert.equal(ended.disconnection_reason, "agent_hangup", JSON.stringify(ended.transcript_object));
      const last = ended.transcript_object?.at(-1);
      // Played to its end: the whole reply is in the transcript, and its words are in the recording before the call's end.
      assert.equal(last?.role, "agent");
      assert.equal(last?.content, GOODBYE);
      const lastWord = last?.words.at(-1);
      assert.ok(lastWord && lastWord.end * 1000 <= (ended.duration_ms ?? 0), `the goodbye ends at ${lastWord?.end} s, the call lasted ${ended.duration_ms} ms`);
    });

    test("a web call speaks a tool's filler phrase while the tool runs, and the caller's speech barges in on it", async () => {
      model.setBehaviour((request): FakeBehaviour =>
        hasToolResults(request) ? { chunks: ["You are booked."] } : userTurns(request) === 1 ? { chunks: [], toolCalls: [{ name: "book_appointment", arguments: {} }] } : { chunks: ["Sure."] },
      );
      const { apiKey, projectId } = await h().organization({
        agent: agent(model, [{ name: "book_appointment", url: `${receiver.url}/slow`, timeout_ms: 8000, speak_during_execution: FILLER }]),
        voice: { accounts: [{ id: accountId, phone_numbers: ["+14155550100"] }] },
      });
      const threadId = await h().thread(apiKey);
      const requestsBefore = model.requests.length;
      const events = await TestSocket.open(`${base}/threads/${threadId}/events`, { authorization: apiKey });
      await h().request({ method: "POST", url: `/voice/${threadId}/web-call`, headers: { authorization: apiKey }, payload: { project_id: projectId } });
      const ready = await events.next((event) => event["type"] === "web_call.ready");
      const callId = String(ready["call_id"]);
      const call = await TestSocket.open(`${base}/calls/${callId}/ws?token=${String(ready["access_token"])}`);
      await call.next((message) => message["type"] === "call.started");

      call.send({ type: "text", text: "Please book me for Tuesday." });
      await call.next((message) => message["type"] === "transcript" && message["role"] === "agent" && String(message["text"]).includes("One moment"));
      // Half a second of the filler is heard while the tool runs (the receiver never answers).
      await eventually(() => call.audioFrames >= 25, { what: "the filler's audio", timeoutMs: 20_000 });
      assert.equal(receiver.requests.filter((request) => (request.json["call"] as { id?: string } | null)?.id === callId).length, 1, "the tool is running");

      const interruption = (await espeakCli("Wait, stop, I changed my mind.", { sampleRate: 16_000 })).samples;
      let cleared = false;
      for (const frame of framesOf(concatSamples(interruption, silence(800)))) {
        call.sendAudio(frame);
        await new Promise((resolve) => setTimeout(resolve, FRAME_MS));
        cleared ||= call.received.some((message) => message["type"] === "clear");
      }
      await call.next((message) => message["type"] === "clear");
      assert.ok(cleared, "the far end was told to drop the filler while the caller was still talking");
      const said = await call.next((message) => message["type"] === "transcript" && message["role"] === "agent" && message["final"] === true);
      const kept = String(said["text"]);
      assert.ok(kept.length > 0 && kept.length < FILLER.length && FILLER.startsWith(kept), `the transcript keeps what was played of the filler: "${kept}"`);
      // The interrupted turn asks the model nothing more: the tool's result, when it comes, is not answered.
      assert.ok(!model.requests.slice(requestsBefore).some(hasToolResults));

      call.send({ type: "hangup" });
      assert.equal((await waitForCall(h().request, apiKey, callId, (detail) => detail.status === "ended", 30_000)).disconnection_reason, "user_hangup");
      call.close();
      events.close();
    });
  },
  voiceSuite({ voice: audioVoiceSettings, only: "pglite" }),
);
