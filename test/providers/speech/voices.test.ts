import assert from "node:assert/strict";
import { after, describe, test } from "node:test";
import { EspeakPool } from "../../../src/providers/speech/espeak/espeak-tts.js";
import { createRecordingVoices, espeakRecordingVoices, type RecordingVoices, toneRecordingVoices } from "../../../src/providers/speech/recording-voices.js";
import type { SpokenText } from "../../../src/providers/speech/tts.js";
import { alignWords, speechTokens } from "../../../src/providers/speech/word-timing.js";

const SENTENCE = "Hello there, how can I help you today? Our office opens at 9:30 on weekdays.";

function rms(samples: Int16Array): number {
  let energy = 0;
  for (const sample of samples) energy += sample * sample;
  return Math.sqrt(energy / Math.max(1, samples.length));
}

function assertWellFormed(speech: SpokenText, text: string): void {
  const duration = speech.samples.length / speech.sampleRate;
  assert.ok(rms(speech.samples) > 300, `audio is audible (RMS ${rms(speech.samples).toFixed(0)})`);
  assert.deepEqual(
    speech.words?.map((word) => word.word),
    speechTokens(text).map((token) => token.word),
  );
  let previousEnd = 0;
  for (const word of speech.words ?? []) {
    assert.ok(word.start >= previousEnd, `${word.word} starts at ${word.start}, after the previous end ${previousEnd}`);
    assert.ok(word.end >= word.start, `${word.word} ends after it starts`);
    assert.ok(word.end <= duration, `${word.word} ends inside the clip`);
    previousEnd = word.end;
  }
}

describe("speech tokens", () => {
  test("words lose the punctuation at their edges and remember the pause it calls for", () => {
    assert.deepEqual(speechTokens("Hello, it's 9:30 — right? (Yes.)"), [
      { word: "Hello", pauseAfter: "clause" },
      { word: "it's", pauseAfter: "word" },
      { word: "9:30", pauseAfter: "clause" },
      { word: "right", pauseAfter: "sentence" },
      { word: "Yes", pauseAfter: "sentence" },
    ]);
  });

  test("a text of only punctuation and spaces has no words", () => {
    assert.deepEqual(speechTokens("  ... — !"), []);
  });
});

describe("word alignment", () => {
  const rate = 16000;
  /** Tones of known lengths separated by known silences: the boundaries the alignment should find. */
  function bursts(spans: [number, number][], total: number): Int16Array {
    const samples = new Int16Array(Math.round(total * rate));
    for (const [start, end] of spans) {
      for (let i = Math.round(start * rate); i < Math.round(end * rate); i++) samples[i] = Math.round(8000 * Math.sin(i * 0.2));
    }
    return samples;
  }

  test("words separated by silences get those silences as their boundaries", () => {
    const spans: [number, number][] = [
      [0.1, 0.4],
      [0.45, 0.6],
      [0.9, 1.3],
      [1.34, 1.5],
    ];
    const words = alignWords({ sampleRate: rate, samples: bursts(spans, 1.7) }, speechTokens("Hello there. Lovely day"));
    words.forEach((word, i) => {
      const [start, end] = spans[i] ?? [0, 0];
      assert.ok(Math.abs(word.start - start) <= 0.01, `${word.word} starts near ${start}: ${word.start}`);
      assert.ok(Math.abs(word.end - end) <= 0.01, `${word.word} ends near ${end}: ${word.end}`);
    });
  });

  test("words run together without silence are split in proportion to their length", () => {
    const words = alignWords({ sampleRate: rate, samples: bursts([[0, 1.2]], 1.2) }, speechTokens("aa bbbbbbbb cc"));
    assert.equal(words[0]?.start, 0);
    assert.equal(words[2]?.end, 1.2);
    const lengths = words.map((word) => word.end - word.start);
    assert.ok((lengths[1] ?? 0) > 2 * (lengths[0] ?? 0), `the long word gets the larger share: ${lengths.join(", ")}`);
  });

  test("for any audio and any text the timings are one per word, ordered and inside the clip", () => {
    let seed = 7;
    const random = (): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed / 2 ** 32;
    };
    const vocabulary = ["a", "word", "longer-word", "9:30", "yes,", "no.", "—", "extraordinarily", "ok?"];
    for (let round = 0; round < 200; round++) {
      const spans: [number, number][] = [];
      for (let t = random() * 0.2; t < 3; t += random() * 0.5 + 0.01) spans.push([t, (t += random() * 0.4)]);
      const total = 3.5 * random();
      const text = Array.from({ length: Math.floor(random() * 25) }, () => vocabulary[Math.floor(random() * vocabulary.length)]).join(" ");
      const tokens = speechTokens(text);
      const samples = bursts(spans, total);
      const words = alignWords({ sampleRate: rate, samples }, tokens);
      assert.equal(words.length, tokens.length);
      let previousEnd = 0;
      for (const word of words) {
        assert.ok(word.start >= previousEnd && word.end >= word.start && word.end <= samples.length / rate, `round ${round}: ${JSON.stringify(words)}`);
        previousEnd = word.end;
      }
    }
  });

  test("silent audio still gives one ordered timing per word, covering the clip", () => {
    const words = alignWords({ sampleRate: rate, samples: new Int16Array(rate) }, speechTokens("one two three"));
    assert.deepEqual(
      words.map((word) => word.word),
      ["one", "two", "three"],
    );
    assert.equal(words[0]?.start, 0);
    assert.equal(words[2]?.end, 1);
    assert.equal(words[0]?.end, words[1]?.start);
    assert.equal(words[1]?.end, words[2]?.start);
    assert.ok((words[1]?.start ?? 0) < (words[2]?.start ?? 0));
  });
});

describe("the vowel-tone voices", () => {
  const synthesizer = toneRecordingVoices();

  test("it renders audible audio with one exact, ordered timing per word", async () => {
    assertWellFormed(await synthesizer.agent.synthesize(SENTENCE), SENTENCE);
  });

  test("the agent and the user sound different and the same text renders the same samples", async () => {
    const agent = await synthesizer.agent.synthesize("Good morning");
    const user = await synthesizer.user.synthesize("Good morning");
    assert.notDeepEqual(agent.samples, user.samples);
    assert.deepEqual((await synthesizer.agent.synthesize("Good morning")).samples, agent.samples);
  });

  test("an empty text gives an empty clip", async () => {
    const speech = await synthesizer.user.synthesize("");
    assert.equal(speech.samples.length, 0);
    assert.deepEqual(speech.words, []);
  });
});

describe("the eSpeak NG voices", async () => {
  const pool = new EspeakPool(1);
  const espeak = await pool.check().then(() => espeakRecordingVoices(pool), () => undefined);
  after(() => pool.close());
  const skip = espeak ? false : "the optional espeak-ng package is not installed";

  test("it is what the factory picks when the package is installed", { skip }, async () => {
    const chosen: RecordingVoices = await createRecordingVoices();
    assert.equal(chosen.name, "espeak-ng");
    await chosen.close();
  });

  test("it speaks audibly with one ordered timing per word inside the clip", { skip }, async () => {
    assert.ok(espeak);
    assertWellFormed(await espeak.agent.synthesize(SENTENCE), SENTENCE);
  });

  test("the agent and the user have different voices", { skip }, async () => {
    assert.ok(espeak);
    const [agent, user] = await Promise.all([espeak.agent.synthesize("Good morning"), espeak.user.synthesize("Good morning")]);
    assert.notDeepEqual(agent.samples, user.samples);
    assertWellFormed(user, "Good morning");
  });

  test("a text that starts with a dash is spoken, not read as an option", { skip }, async () => {
    assert.ok(espeak);
    assertWellFormed(await espeak.user.synthesize("-5 degrees outside"), "-5 degrees outside");
  });

  test("synthesis goes on after the synthesizer was closed, in a new worker", { skip }, async () => {
    assert.ok(espeak);
    await espeak.close();
    assertWellFormed(await espeak.agent.synthesize("Still here"), "Still here");
  });
});
