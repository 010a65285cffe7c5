import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { FRAME_MS, framesOf } from "../../../src/providers/speech/audio.js";
import { callPhrases, readsComplete } from "../../../src/providers/speech/pipeline/phrases.js";
import { TurnDetector, type TurnEvent } from "../../../src/providers/speech/pipeline/turn-detector.js";
import { WebRtcVad } from "../../../src/providers/speech/webrtc/webrtc-vad.js";
import { concatSamples, espeakCli, silence } from "../../support/speech-audio.js";

function noise(ms: number, amplitude: number): Int16Array {
  const out = new Int16Array(ms * 16);
  let seed = 7;
  for (let i = 0; i < out.length; i++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    out[i] = Math.round(((seed / 0x7fffffff) * 2 - 1) * amplitude);
  }
  return out;
}

describe("voice activity detection (WebRTC VAD)", () => {
  it("tells speech from silence and from quiet steady noise", async () => {
    const vad = await WebRtcVad.create();
    try {
      const speech = (await espeakCli("The quick brown fox jumps over the lazy dog.", { sampleRate: 16_000 })).samples;
      const voiced = [...framesOf(speech)].filter((frame) => vad.isSpeech(frame)).length;
      assert.ok(voiced / [...framesOf(speech)].length > 0.5, `only ${voiced} frames of speech were voiced`);
      assert.equal([...framesOf(silence(1000))].filter((frame) => vad.isSpeech(frame)).length, 0);
      const hiss = [...framesOf(noise(1000, 30))].filter((frame) => vad.isSpeech(frame)).length;
      assert.ok(hiss <= 5, `${hiss} frames of quiet noise taken for speech`);
    } finally {
      vad.close();
    }
  });

  it("a turn ends after the configured silence, holds the speech, and a short click is no turn", async () => {
    const vad = await WebRtcVad.create();
    const detector = new TurnDetector(vad, { endOfTurnMs: 500, minEndOfTurnMs: 200, startMs: 100, preRollMs: 200, maxTurnMs: 30_000 });
    const speech = (await espeakCli("What are your opening hours?", { sampleRate: 16_000 })).samples;
    const click = noise(20, 20_000);
    const stream = concatSamples(silence(400), click, silence(400), speech, silence(900));
    const events: { event: TurnEvent; frame: number }[] = [];
    for (const frame of framesOf(stream)) {
      const event = detector.push(frame);
      if (event) events.push({ event, frame: detector.frameCount });
    }
    vad.close();
    assert.deepEqual(events.map(({ event }) => event.type), ["speech_started", "turn_ended"]);
    const ended = events[1];
    assert.ok(ended?.event.type === "turn_ended");
    let lastLoud = speech.length - 1;
    while (lastLoud > 0 && Math.abs(speech[lastLoud] ?? 0) < 300) lastLoud--;
    const speechEndFrame = (400 + 20 + 400 + lastLoud / 16) / FRAME_MS;
    // The end is announced 500 ms (25 frames) after the last speech frame, give or take the VAD's hangover.
    assert.ok(Math.abs(ended.frame - speechEndFrame - 25) <= 6, `turn ended at frame ${ended.frame}, speech at ${speechEndFrame}`);
    assert.ok(Math.abs(ended.event.endFrame - speechEndFrame) <= 6);
    assert.ok(ended.event.audio.length >= speech.length * 0.9 && ended.event.audio.length <= speech.length + 16 * 500);
  });
});

describe("end of turn that follows the words", () => {
  it("a turn whose words read as complete ends after the shorter silence; one left hanging waits for the longer", async () => {
    const speech = (await espeakCli("What are your opening hours?", { sampleRate: 16_000 })).samples;
    const endFrames = async (complete: boolean) => {
      const vad = await WebRtcVad.create();
      const detector = new TurnDetector(vad, { endOfTurnMs: 800, minEndOfTurnMs: 200, startMs: 100, preRollMs: 200, maxTurnMs: 30_000 }, () => complete);
      let ended: { frame: number; endFrame: number } | undefined;
      for (const frame of framesOf(concatSamples(silence(300), speech, silence(1500)))) {
        const event = detector.push(frame);
        if (event?.type === "turn_ended") ended = { frame: detector.frameCount, endFrame: event.endFrame };
      }
      vad.close();
      assert.ok(ended, "the turn ended");
      return ended.frame - ended.endFrame;
    };
    assert.equal(await endFrames(true), 200 / FRAME_MS);
    assert.equal(await endFrames(false), 800 / FRAME_MS);
  });

  it("reads a sentence as complete unless it ends on a word that needs more", () => {
    assert.ok(readsComplete("what are your opening hours"));
    assert.ok(readsComplete("yes"));
    assert.ok(!readsComplete(""));
    assert.ok(!readsComplete("i would like to"));
    assert.ok(!readsComplete("my name is"));
    assert.ok(!readsComplete("book a table for two and"));
    assert.ok(!readsComplete("oh"));
    assert.ok(readsComplete("no thank you"));
    assert.ok(!readsComplete("hi there"));
    assert.ok(!readsComplete("how long does"));
  });

  it("favours the project's keywords first, then the content words of its texts, each once", () => {
    const phrases = callPhrases(["Ada Lovelace"], ["We are open from nine to five.", "Ada is our founder; we open at nine."]);
    assert.deepEqual(phrases, ["Ada Lovelace", "open", "nine", "five", "ada", "founder"]);
    assert.equal(callPhrases([], ["alpha bravo charlie delta"], 2).length, 2);
  });
});
