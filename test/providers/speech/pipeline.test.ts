import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import pino from "pino";
import { FRAME_MS, framesOf } from "../../../src/providers/speech/audio.js";
import { EspeakPool, EspeakTts } from "../../../src/providers/speech/espeak/espeak-tts.js";
import { CallRecorder } from "../../../src/providers/speech/pipeline/call-recorder.js";
import type { AudioTransport, PipelineNotice } from "../../../src/providers/speech/pipeline/transport.js";
import { VoicePipeline } from "../../../src/providers/speech/pipeline/voice-pipeline.js";
import { PocketsphinxStt } from "../../../src/providers/speech/pocketsphinx/pocketsphinx-stt.js";
import { defaultTurnOptions } from "../../../src/providers/speech/pipeline/turn-detector.js";
import { WebRtcVad } from "../../../src/providers/speech/webrtc/webrtc-vad.js";
import type { TranscriptItem, VoiceAgent } from "../../../src/domain/calls/ports.js";
import { concatSamples, espeakCli, silence } from "../../support/speech-audio.js";

const longReply = "We are open from nine to five on weekdays. On Saturdays we open at ten and close at two. On Sundays and public holidays the office stays closed all day.";

/** An agent that streams a fixed reply word by word, as the built-in agent does, and keeps what it is told was said. */
class ScriptedAgent implements VoiceAgent {
  heard: TranscriptItem[] = [];
  async respond(_transcript: readonly TranscriptItem[], onDelta?: (text: string) => void, signal?: AbortSignal): Promise<string | undefined> {
    for (const word of longReply.split(" ")) {
      if (signal?.aborted) return undefined;
      onDelta?.(`${word} `);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    return longReply;
  }
  async hear(transcript: readonly TranscriptItem[]): Promise<boolean> {
    this.heard = [...transcript];
    return true;
  }
}

describe("the voice pipeline", () => {
  const pool = new EspeakPool(1);
  const stt = new PocketsphinxStt("en-US", 1);
  after(async () => {
    stt.close();
    await pool.close();
  });

  it("a barge-in stops playback, clears the far end, and keeps only what was played in the transcript", async () => {
    const vad = await WebRtcVad.create();
    const played: Int16Array[] = [];
    const notices: PipelineNotice[] = [];
    let cleared = 0;
    const transport: AudioTransport = { play: (frame) => played.push(frame), clear: () => (cleared += 1), mark: () => undefined, notify: (notice) => notices.push(notice) };
    const agent = new ScriptedAgent();
    const failures: string[] = [];
    const pipeline = new VoicePipeline({
      agent,
      transport,
      speech: { stt, tts: new EspeakTts(pool, "en-us"), vad, turn: defaultTurnOptions, playback: transport, recorder: new CallRecorder() },
      failed: (stage) => failures.push(stage),
      log: pino({ level: "silent" }),
    });
    const question = (await espeakCli("What are your opening hours?", { sampleRate: 16_000 })).samples;
    const interruption = (await espeakCli("Sorry, what about Saturday?", { sampleRate: 16_000 })).samples;
    const feed = async (samples: Int16Array) => {
      for (const frame of framesOf(samples)) {
        pipeline.hear(frame);
        await new Promise((resolve) => setTimeout(resolve, FRAME_MS));
      }
    };
    await feed(concatSamples(silence(300), question, silence(600)));
    // Wait for the agent to start speaking, let it talk for two seconds, then talk over it.
    while (!notices.some((notice) => notice.type === "agent_speaking")) await feed(silence(100));
    await feed(silence(2000));
    const playedBefore = played.length;
    // Stopped before the interruption could end its own turn (200 ms of silence after a complete sentence).
    await feed(concatSamples(interruption, silence(100)));
    await pipeline.stop();
    vad.close();

    assert.deepEqual(failures, []);
    assert.ok(cleared >= 1, "the far end was told to clear its buffer");
    // Playback stopped within a few frames of the interruption's start (the VAD needs ~100 ms to be sure).
    const fullReplyFrames = (longReply.length / 15) * (1000 / FRAME_MS);
    assert.ok(played.length < playedBefore + 40, `${played.length - playedBefore} frames played after the interruption began`);
    assert.ok(played.length < fullReplyFrames * 0.8);
    const agentSaid = agent.heard.filter((item) => item.role === "agent").map((item) => item.content);
    assert.equal(agentSaid.length, 1, JSON.stringify(agent.heard));
    const said = agentSaid[0] ?? "";
    assert.ok(said.length > 10 && said.length < longReply.length, `kept "${said}"`);
    assert.ok(longReply.startsWith(said), `"${said}" is not what was played of the reply`);
    assert.ok(said.startsWith("We are open"), `kept "${said}"`);
  });
});
