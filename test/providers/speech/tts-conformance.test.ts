import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { durationMs, toPipelineRate } from "../../../src/providers/speech/audio.js";
import { EspeakPool, EspeakTts } from "../../../src/providers/speech/espeak/espeak-tts.js";
import { FliteTts } from "../../../src/providers/speech/flite/flite-tts.js";
import { SpeechProviderError } from "../../../src/providers/speech/errors.js";
import { OpenAiTts } from "../../../src/providers/speech/openai/openai-tts.js";
import { PocketsphinxStt } from "../../../src/providers/speech/pocketsphinx/pocketsphinx-stt.js";
import type { TextToSpeech } from "../../../src/providers/speech/tts.js";
import { startFakeOpenAiSpeech, type FakeSpeechServer } from "../../support/fake-speech-servers.js";
import { wordsOf } from "../../support/speech-audio.js";

describe("text-to-speech", () => {
const listener = new PocketsphinxStt("en-US", 1);
after(() => listener.close());

/** What every text-to-speech adapter must do: speech that a real recognizer understands, of a plausible length. */
function ttsConformance(name: string, make: () => TextToSpeech) {
  describe(`text-to-speech conformance: ${name}`, () => {
    it("speaks a sentence that a recognizer hears back", async () => {
      const audio = await make().synthesize("What are your opening hours?");
      const ms = durationMs(audio);
      assert.ok(ms > 1000 && ms < 5000, `${ms} ms of audio`);
      const heard = wordsOf(await listener.transcribe(toPipelineRate(audio)));
      assert.ok(heard.includes("opening"), `heard "${heard.join(" ")}"`);
    });

    it("a longer text takes longer to say, and the voice is not silent", async () => {
      const short = await make().synthesize("Yes.");
      const long = await make().synthesize("Yes, and our office is on the second floor of the building by the station.");
      assert.ok(durationMs(long) > durationMs(short) * 3);
      assert.ok(long.samples.some((sample) => Math.abs(sample) > 1000));
    });
  });
}

ttsConformance("flite", () => new FliteTts("kal16"));

const pool = new EspeakPool(1);
after(() => pool.close());
ttsConformance("espeak", () => new EspeakTts(pool, "en-us"));

let fake: FakeSpeechServer | undefined;
before(async () => {
  fake = await startFakeOpenAiSpeech();
});
after(async () => fake?.close());
const openAi = () => new OpenAiTts({ baseUrl: fake!.baseUrl, apiKey: fake!.apiKey, model: "tts-1" }, "alloy");
ttsConformance("openai", openAi);

describe("text-to-speech details", () => {
  it("the openai adapter asks for WAV with OpenAI's JSON fields, the same request the official SDK makes", async () => {
    const audio = await openAi().synthesize("Hello there.");
    assert.equal(audio.sampleRate, 24_000);
    assert.deepEqual(fake!.requests.at(-1), { path: "/audio/speech", model: "tts-1", fields: { voice: "alloy", input: "Hello there." } });
    const { default: OpenAI } = await import("openai");
    const client = new OpenAI({ apiKey: fake!.apiKey, baseURL: fake!.baseUrl });
    const response = await client.audio.speech.create({ model: "tts-1", voice: "alloy", input: "Hello there.", response_format: "wav" });
    assert.equal(Buffer.from(await response.arrayBuffer()).toString("ascii", 0, 4), "RIFF");
  });

  it("a vendor failure is a SpeechProviderError", async () => {
    fake!.failNext(500);
    await assert.rejects(openAi().synthesize("Hi."), (error: unknown) => error instanceof SpeechProviderError && error.status === 500 && error.retryable);
  });

  it("espeak takes the project's voice, so two voices sound different", async () => {
    const male = await new EspeakTts(pool, "en-us").synthesize("Hello there, how are you?");
    const female = await new EspeakTts(pool, "en-us+f3", { pitch: 70 }).synthesize("Hello there, how are you?");
    assert.notDeepEqual(male.samples.slice(0, 4000), female.samples.slice(0, 4000));
  });
});
});
