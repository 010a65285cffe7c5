import assert from "node:assert/strict";
import { test } from "node:test";
import { startFakeOpenAi } from "../support/fake-llm-servers.js";
import { acmeAgent } from "../support/fixtures.js";
import { forEachDatabase } from "../support/harness.js";
import { audioVoiceSettings, processed, voiceConfig, voiceSuite, waitForCall, type CallDetail } from "./support.js";

const caller = "+14155552671";

const inboundConfig = {
  ...voiceConfig,
  voice: {
    ...voiceConfig.voice,
    inbound: { enabled: true, greeting: "Acme clinic, how can I help?" },
    simulated: { ...voiceConfig.voice.simulated, script: ["What are your opening hours?", "Great, thanks. Bye."] },
  },
};

interface InboundCall {
  id: string;
  thread_id: string;
  call_type: string;
  direction: string;
  status: string;
  from_number: string;
  to_number: string;
}

interface Message {
  role: string;
  message: string;
  conversation_id: number;
}

forEachDatabase("inbound calls from a simulated caller", (h) => {
  const ring = (apiKey: string, payload: Record<string, unknown>) =>
    h().request({ method: "POST", url: "/voice/simulated/inbound", headers: { authorization: apiKey }, payload });
  const get = <T>(apiKey: string, url: string) => h().request({ method: "GET", url, headers: { authorization: apiKey } }).then((response) => response.json<T>());

  test("a call is answered at once on the caller's thread, greeted first, and is complete at ended", async () => {
    const { apiKey, projectId } = await h().organization(inboundConfig);
    const answered = await ring(apiKey, { project_id: projectId, from: "+1 (415) 555-2671" });
    assert.equal(answered.status, 200, answered.body);
    const call = answered.json<InboundCall>();
    assert.deepEqual(Object.keys(call).sort(), ["call_type", "direction", "from_number", "id", "status", "thread_id", "to_number"]);
    assert.deepEqual({ ...call, id: "", thread_id: "" }, {
      id: "",
      thread_id: "",
      call_type: "phone_call",
      direction: "inbound",
      status: "ongoing",
      from_number: caller,
      to_number: "+14155550100",
    });
    assert.equal((await get<{ id: string }>(apiKey, `/threads/by-alias/${encodeURIComponent(caller)}`)).id, call.thread_id);

    const done = await waitForCall(h().request, apiKey, call.id, processed);
    assert.equal(done.status, "ended");
    assert.equal(done.disconnection_reason, "user_hangup");
    assert.equal(done.direction, "inbound");
    assert.equal(done.conversation_id, 1);
    assert.equal(
      done.transcript,
      [
        "Agent: Acme clinic, how can I help?",
        "User: What are your opening hours?",
        "Agent: We are open from 9 to 5 on weekdays.",
        "User: Great, thanks. Bye.",
      ].join("\n"),
    );
    assert.ok(done.recording_url, "the recording is there");

    const events = await get<{ calls: { id: string }[] }>(apiKey, "/calls?direction=inbound");
    assert.deepEqual(events.calls.map((listed) => listed.id), [call.id]);
    assert.deepEqual((await get<{ calls: unknown[] }>(apiKey, "/calls?direction=outbound")).calls, []);
    const usage = await get<{ usage: { voice_minutes: number; voice_cost: number } }>(apiKey, `/threads/${call.thread_id}`);
    assert.ok(usage.usage.voice_minutes > 0 && usage.usage.voice_cost > 0, JSON.stringify(usage));
  });

  test("the call's statuses go ongoing then ended on the thread's events: never queued", async () => {
    const { apiKey, projectId, organizationId } = await h().organization(inboundConfig);
    const call = (await ring(apiKey, { project_id: projectId, from: caller })).json<InboundCall>();
    await waitForCall(h().request, apiKey, call.id, processed);
    const rows = await h().database.db.query<{ payload: { call: { status: string } } }>(
      `SELECT e.payload FROM thread_events e JOIN threads t ON t.id = e.thread_id
        WHERE t.organization_id = $1 AND e.type = 'call.updated' ORDER BY e.seq`,
      [organizationId],
    );
    const statuses = rows.map((row) => row.payload.call.status);
    assert.equal(statuses[0], "ongoing", JSON.stringify(statuses));
    assert.ok(statuses.includes("ended") && !statuses.includes("queued"), JSON.stringify(statuses));
  });

  test("two calls from one number land in one thread, in two conversations, and the second sees the first's history", async () => {
    const model = await startFakeOpenAi({ chunks: ["Noted."] });
    try {
      const agent = { ...acmeAgent, provider: "openai", base_url: model.url, model: "fake", api_key: "sk-fake" };
      const { apiKey, projectId } = await h().organization({ ...inboundConfig, agent });
      const first = (await ring(apiKey, { project_id: projectId, from: caller })).json<InboundCall>();
      await waitForCall(h().request, apiKey, first.id, processed);
      const requestsOfFirst = model.requests.length;
      const second = (await ring(apiKey, { project_id: projectId, from: caller })).json<InboundCall>();
      const done: CallDetail = await waitForCall(h().request, apiKey, second.id, processed);
      assert.equal(second.thread_id, first.thread_id);
      assert.equal(done.conversation_id, 2);
      const history = await get<{ messages: Message[] }>(apiKey, `/threads/${first.thread_id}/messages?limit=100`);
      assert.deepEqual([...new Set(history.messages.map((message) => message.conversation_id))], [1, 2]);
      const asked = JSON.stringify(model.requests[requestsOfFirst]?.json);
      assert.ok(asked.includes("What are your opening hours?") && asked.includes("Great, thanks. Bye."), `the second call's first prompt: ${asked}`);
    } finally {
      await model.close();
    }
  });

  test("two simultaneous first calls from a new number make one thread", async () => {
    const { apiKey, projectId } = await h().organization(inboundConfig);
    const answers = await Promise.all([ring(apiKey, { project_id: projectId, from: caller }), ring(apiKey, { project_id: projectId, from: caller })]);
    // One thread holds one active phone call: a caller still on the line when the other rings is refused (409).
    assert.ok(answers.every((answer) => answer.status === 200 || answer.status === 409), answers.map((answer) => answer.body).join(" "));
    const answered = answers.filter((answer) => answer.status === 200).map((answer) => answer.json<InboundCall>());
    assert.ok(answered.length > 0);
    const threads = await get<{ threads: { id: string; alias: string | null }[] }>(apiKey, "/threads?limit=100");
    assert.deepEqual(threads.threads.map((thread) => thread.alias), [caller]);
    assert.ok(answered.every((call) => call.thread_id === threads.threads[0]!.id), JSON.stringify(answered));
  });

  test("bad input: a project that does not answer calls, an invalid number, another organization's project", async () => {
    const { apiKey, projectId } = await h().organization(voiceConfig);
    const off = await ring(apiKey, { project_id: projectId, from: caller });
    assert.equal(off.status, 422, off.body);
    assert.deepEqual(off.json<{ detail: { loc: unknown }[] }>().detail[0]!.loc, ["body", "project_id"]);
    const mine = await h().organization(inboundConfig);
    const badNumber = await ring(mine.apiKey, { project_id: mine.projectId, from: "12" });
    assert.deepEqual(badNumber.json<{ detail: { loc: unknown }[] }>().detail[0]!.loc, ["body", "from"]);
    const foreign = await ring(mine.apiKey, { project_id: projectId, from: caller });
    assert.deepEqual([foreign.status, foreign.json()], [404, { detail: "Project not found" }]);
    assert.deepEqual((await get<{ threads: unknown[] }>(mine.apiKey, "/threads?limit=10")).threads, [], "nothing was created");
  });
}, voiceSuite());

/** Real audio is slow; PGlite exercises the same code as PostgreSQL for everything the pipeline adds. */
forEachDatabase(
  "inbound calls with real audio through the speech pipeline",
  (h) => {
    test("the greeting is spoken first, the caller is heard and answered, and transcript and recording are complete at ended", async () => {
      const config = {
        ...inboundConfig,
        voice: { ...inboundConfig.voice, simulated: { script: ["What are your opening hours?", "Thanks, bye."], ring_ms: 20, turn_ms: 300 } },
      };
      const { apiKey, projectId } = await h().organization(config);
      const answered = await h().request({ method: "POST", url: "/voice/simulated/inbound", headers: { authorization: apiKey }, payload: { project_id: projectId, from: caller } });
      assert.equal(answered.status, 200, answered.body);
      const callId = answered.json<InboundCall>().id;
      const ended = await waitForCall(h().request, apiKey, callId, (call) => call.status !== "ongoing", 120_000);
      assert.equal(ended.status, "ended", JSON.stringify(ended));
      assert.equal(ended.disconnection_reason, "user_hangup");
      assert.ok(ended.transcript_object && ended.recording_url && ended.transcript, "the read that shows ended has transcript and recording");
      const [greeting, ...rest] = ended.transcript_object;
      assert.deepEqual([greeting?.role, greeting?.content], ["agent", "Acme clinic, how can I help?"]);
      assert.ok((greeting?.words.length ?? 0) > 0, "the greeting has word timings from its audio");
      assert.equal(rest[0]?.role, "user", JSON.stringify(ended.transcript_object));
      assert.match(rest.find((entry) => entry.role === "agent")?.content ?? "", /open from 9 to 5/, JSON.stringify(ended.transcript_object));
      const recording = await h().app.server.inject({ method: "GET", url: ended.recording_url });
      assert.equal(recording.statusCode, 200);
    });
  },
  voiceSuite({ voice: audioVoiceSettings, only: "pglite" }),
);
