import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { RECORDING_SAMPLE_RATE, renderRecording, type Utterance } from "../../../src/providers/speech/recording.js";
import { type RecordingVoices, toneRecordingVoices } from "../../../src/providers/speech/recording-voices.js";
import type { SpokenText, TextToSpeech } from "../../../src/providers/speech/tts.js";
import type { Speaker } from "../../../src/domain/calls/ports.js";

interface ParsedWav {
  format: number;
  channels: number;
  sampleRate: number;
  byteRate: number;
  blockAlign: number;
  bitsPerSample: number;
  samples: Int16Array;
}

/** Reads the canonical header field by field, independently of the code under test. */
function parseWav(wav: Buffer): ParsedWav {
  assert.equal(wav.toString("ascii", 0, 4), "RIFF");
  assert.equal(wav.readUInt32LE(4), wav.length - 8);
  assert.equal(wav.toString("ascii", 8, 12), "WAVE");
  assert.equal(wav.toString("ascii", 12, 16), "fmt ");
  assert.equal(wav.readUInt32LE(16), 16);
  assert.equal(wav.toString("ascii", 36, 40), "data");
  const dataBytes = wav.readUInt32LE(40);
  assert.equal(dataBytes, wav.length - 44);
  const samples = new Int16Array(dataBytes / 2);
  for (let i = 0; i < samples.length; i++) samples[i] = wav.readInt16LE(44 + 2 * i);
  return {
    format: wav.readUInt16LE(20),
    channels: wav.readUInt16LE(22),
    sampleRate: wav.readUInt32LE(24),
    byteRate: wav.readUInt32LE(28),
    blockAlign: wav.readUInt16LE(32),
    bitsPerSample: wav.readUInt16LE(34),
    samples,
  };
}

/** Every utterance is one second of a constant level per speaker, at 8 kHz, with one word per half second. */
class FixedVoice implements TextToSpeech {
  readonly name = "fixed";
  constructor(private readonly voice: Speaker) {}
  async synthesize(text: string): Promise<SpokenText> {
    const voice = this.voice;
    const samples = new Int16Array(8000).fill(voice === "agent" ? 1000 : -1000);
    const words = text.split(" ").map((word, i) => ({ word, start: i * 0.5, end: i * 0.5 + 0.4 }));
    return { sampleRate: 8000, samples, words };
  }
}

function fixedVoices(): RecordingVoices {
  return { name: "fixed", agent: new FixedVoice("agent"), user: new FixedVoice("user"), close: async () => undefined };
}

const CONVERSATION: Utterance[] = [
  { role: "agent", content: "Hello, thanks for calling Acme. How can I help?", startSeconds: 0.5 },
  { role: "user", content: "When are you open on Saturdays?", startSeconds: 1 },
  { role: "agent", content: "We are open from ten to two on Saturdays.", startSeconds: 9 },
  { role: "user", content: "Great, thank you!", startSeconds: 14.25 },
];

describe("renderRecording", () => {
  test("the recording is a valid mono 16-bit PCM WAV whose duration matches its samples", async () => {
    const recording = await renderRecording(CONVERSATION, toneRecordingVoices());
    const wav = parseWav(recording.wav);
    assert.deepEqual(
      [wav.format, wav.channels, wav.sampleRate, wav.byteRate, wav.blockAlign, wav.bitsPerSample],
      [1, 1, RECORDING_SAMPLE_RATE, RECORDING_SAMPLE_RATE * 2, 2, 16],
    );
    assert.equal(recording.durationSeconds, wav.samples.length / wav.sampleRate);
    assert.ok(wav.samples.some((sample) => Math.abs(sample) > 1000), "the recording is not silent");
  });

  test("transcript_object word times are monotonic, in milliseconds and inside the recording", async () => {
    const recording = await renderRecording(CONVERSATION, toneRecordingVoices());
    assert.deepEqual(
      recording.transcriptObject.map((entry) => [entry.role, entry.content]),
      CONVERSATION.map((utterance) => [utterance.role, utterance.content]),
    );
    let previous = 0;
    for (const entry of recording.transcriptObject) {
      assert.ok(entry.words.length > 0);
      for (const word of entry.words) {
        assert.ok(word.start >= previous && word.end >= word.start, `${word.word} at ${word.start}–${word.end} after ${previous}`);
        assert.ok(word.end <= recording.durationSeconds);
        assert.equal(Math.round(word.start * 1000) / 1000, word.start);
        assert.equal(Math.round(word.end * 1000) / 1000, word.end);
        previous = word.end;
      }
    }
    assert.ok((recording.transcriptObject[2]?.words[0]?.start ?? 0) >= 9, "a clip that fits starts at its own time");
  });

  test("a clip that overruns the next start pushes the next one back, so that no two overlap", async () => {
    const recording = await renderRecording(
      [
        { role: "agent", content: "one two", startSeconds: 0 },
        { role: "user", content: "three four", startSeconds: 0.25 },
        { role: "agent", content: "five", startSeconds: 5 },
      ],
      fixedVoices(),
    );
    assert.deepEqual(
      recording.transcriptObject.map((entry) => entry.words.map((word) => [word.word, word.start, word.end])),
      [
        [
          ["one", 0, 0.4],
          ["two", 0.5, 0.9],
        ],
        [
          ["three", 1, 1.4],
          ["four", 1.5, 1.9],
        ],
        [["five", 5, 5.4]],
      ],
    );
    assert.equal(recording.durationSeconds, 6);
    const samples = parseWav(recording.wav).samples;
    const at = (seconds: number): number => samples[Math.round(seconds * RECORDING_SAMPLE_RATE)] ?? 0;
    assert.deepEqual([at(0.5), at(1.5), at(3), at(5.5)], [1000, -1000, 0, 1000], "each voice in its own place, silence between");
  });

  test("clips at another sample rate are resampled, keeping their duration", async () => {
    const recording = await renderRecording([{ role: "user", content: "hello", startSeconds: 0 }], fixedVoices());
    assert.equal(parseWav(recording.wav).samples.length, RECORDING_SAMPLE_RATE);
    assert.equal(recording.durationSeconds, 1);
  });

  test("no utterances give an empty but valid recording", async () => {
    const recording = await renderRecording([], toneRecordingVoices());
    assert.equal(parseWav(recording.wav).samples.length, 0);
    assert.equal(recording.durationSeconds, 0);
    assert.deepEqual(recording.transcriptObject, []);
  });
});
