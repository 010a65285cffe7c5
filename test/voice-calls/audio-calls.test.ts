import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { test } from "node:test";
import { decodeWav } from "../../src/providers/speech/audio.js";
import { wordsOf } from "../support/speech-audio.js";
import { accountId, audioVoiceSettings, sleep, voiceConfig, voiceSuite, waitForCall, type CallDetail } from "./support.js";
import { forEachDatabase } from "../support/harness.js";

const audioConfig = {
  ...voiceConfig,
  voice: {
    ...voiceConfig.voice,
    simulated: { script: ["What are your opening hours?", "Yes, tomorrow works for me."], ring_ms: 20, turn_ms: 300 },
  },
};

/** Real audio is slow to run twice; PGlite exercises the same code as PostgreSQL for everything the pipeline adds. */
forEachDatabase(
  "phone calls with real audio through the speech pipeline",
  (h) => {
    test("the simulated callee is heard by the recognizer, the agent's answer is spoken, and the ended call has its recording", async () => {
      const { apiKey, projectId } = await h().organization(audioConfig);
      const threadId = await h().thread(apiKey);
      const started = Date.now();
      const created = await h().request({ method: "POST", url: `/voice/${threadId}/phone-call`, headers: { authorization: apiKey }, payload: { callee: "+14155552671", project_id: projectId } });
      assert.equal(created.status, 200, created.body);
      const callId = created.json<{ id: string }>().id;
      const ended = await waitForCall(h().request, apiKey, callId, (call) => call.status !== "queued" && call.status !== "ongoing", 120_000);
      assert.equal(ended.status, "ended", JSON.stringify(ended));
      assert.equal(ended.disconnection_reason, "user_hangup");
      // The same read that shows `ended` has the transcript, its timings and the recording.
      assert.ok(ended.transcript_object && ended.recording_url && ended.transcript);
      const user = ended.transcript_object.filter((entry) => entry.role === "user");
      const agent = ended.transcript_object.filter((entry) => entry.role === "agent");
      // PocketSphinx hears eSpeak's voice imperfectly ("well you're opening hours"), but the question's content words come through.
      const heard = wordsOf(user[0]?.content ?? "");
      assert.ok(heard.includes("opening") || heard.includes("hours"), `the recognizer heard ${JSON.stringify(ended.transcript_object)}`);
      assert.match(agent[0]?.content ?? "", /open from 9 to 5/, `the agent said ${JSON.stringify(agent)}`);
      assert.match(ended.transcript, /^User: .*opening/m);
      assert.match(ended.transcript, /^Agent: We are open from 9 to 5/m);
      // The call lasted as long as its audio: two spoken lines, a spoken answer, pauses.
      assert.ok((ended.duration_ms ?? 0) > 4000, `duration ${ended.duration_ms}`);
      assert.ok(Date.now() - started >= (ended.duration_ms ?? 0));

      const recording = await h().app.server.inject({ method: "GET", url: ended.recording_url });
      assert.equal(recording.statusCode, 200);
      await mkdir("test/artifacts", { recursive: true });
      await writeFile("test/artifacts/simulated-call.wav", recording.rawPayload);
      const audio = decodeWav(recording.rawPayload);
      assert.equal(audio.sampleRate, 16_000);
      const recordingMs = (audio.samples.length * 1000) / audio.sampleRate;
      assert.ok(Math.abs(recordingMs - (ended.duration_ms ?? 0)) <= 250, `recording ${recordingMs} ms, duration_ms ${ended.duration_ms}`);
      // Both voices are in it where the transcript places them.
      for (const entry of ended.transcript_object) {
        const first = entry.words[0];
        const last = entry.words.at(-1);
        assert.ok(first && last && last.end <= recordingMs / 1000);
        const from = Math.floor(first.start * audio.sampleRate);
        const to = Math.ceil(last.end * audio.sampleRate);
        const loudest = audio.samples.subarray(from, to).reduce((max, sample) => Math.max(max, Math.abs(sample)), 0);
        assert.ok(loudest > 2000, `${entry.role} "${entry.content}" is silent in the recording (${first.start}-${last.end} s, peak ${loudest}; ${JSON.stringify(ended.transcript_object)})`);
      }

      const analyzed = await waitForCall(h().request, apiKey, callId, (call: CallDetail) => call.call_analysis !== null, 20_000);
      assert.ok(analyzed.call_analysis?.call_summary);
      const events = await h().database.db.query<{ type: string }>("SELECT type FROM thread_events WHERE thread_id = $1 ORDER BY seq", [threadId]);
      assert.ok(events.some((event) => event.type === "call.analyzed"));
    });

    test("a speech engine that is not installed ends the call as error_speech_unavailable, and /readyz lists the engines", async () => {
      const config = { ...audioConfig, speech: { stt: { language: "fr-FR" } } };
      const { apiKey, projectId } = await h().organization(config);
      const threadId = await h().thread(apiKey);
      const created = await h().request({ method: "POST", url: `/voice/${threadId}/phone-call`, headers: { authorization: apiKey }, payload: { callee: "+14155552671", project_id: projectId } });
      const callId = created.json<{ id: string }>().id;
      const failed = await waitForCall(h().request, apiKey, callId, (call) => call.status === "error", 15_000);
      assert.equal(failed.disconnection_reason, "error_speech_unavailable");
      const ready = await h().request({ method: "GET", url: "/readyz" });
      assert.equal(ready.status, 200);
      const body = ready.json<{ status: string; speech: { engine: string; ok: boolean }[] }>();
      assert.deepEqual(body.speech.map((engine) => engine.engine), ["vad:webrtc", "stt:pocketsphinx", "tts:flite", "tts:espeak"]);
      assert.equal(body.status, body.speech.every((engine) => engine.ok) ? "ok" : "degraded");
    });

    test("speech settings are validated, and their API keys are write-only", async () => {
      const admin = (payload: unknown) =>
        h().request({ method: "POST", url: `/admin/organizations/${organizationId}/projects`, headers: { authorization: "Bearer test-admin-key-0123456789abcdef" }, payload: payload as Record<string, unknown> });
      const { organizationId } = await h().organization(audioConfig);
      const bad = await admin({ name: "bad", config: { speech: { stt: { provider: "whisper" }, tts: { voice: "no such voice!" } } } });
      assert.equal(bad.status, 422);
      const locs = bad.json<{ detail: { loc: unknown[] }[] }>().detail.map((issue) => issue.loc.join("."));
      assert.ok(locs.some((loc) => loc.startsWith("body.config.speech.stt.provider")), JSON.stringify(locs));
      const keyed = await admin({
        name: "keyed",
        config: { speech: { stt: { provider: "openai", api_key: "sk-stt-secret", base_url: "http://127.0.0.1:9/v1" }, tts: { provider: "openai", api_key: "sk-tts-secret" } }, voice: { accounts: [{ id: accountId, phone_numbers: ["+14155550100"] }] } },
      });
      assert.equal(keyed.status, 201, keyed.body);
      const view = await h().request({ method: "GET", url: `/admin/projects/${keyed.json<{ id: string }>().id}`, headers: { authorization: "Bearer test-admin-key-0123456789abcdef" } });
      assert.ok(!view.body.includes("sk-stt-secret") && !view.body.includes("sk-tts-secret"));
      const speech = view.json<{ config: { speech: { stt: { api_key_set: boolean; model: string }; tts: { api_key_set: boolean; voice: string } } } }>().config.speech;
      assert.deepEqual([speech.stt.api_key_set, speech.tts.api_key_set, speech.stt.model, speech.tts.voice], [true, true, "whisper-1", "alloy"]);
      const stored = await h().database.db.query<{ encrypted_secrets: string }>("SELECT encrypted_secrets FROM project_config_versions WHERE project_id = $1", [keyed.json<{ id: string }>().id]);
      assert.ok(stored.every((row) => !row.encrypted_secrets.includes("sk-stt-secret")));
      await sleep(0);
    });
  },
  voiceSuite({ voice: audioVoiceSettings, only: "pglite" }),
);
