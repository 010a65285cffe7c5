import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { SpeechProviderError, SpeechUnavailableError } from "../../../src/providers/speech/errors.js";
import { OpenAiStt } from "../../../src/providers/speech/openai/openai-stt.js";
import { checkPocketsphinx, PocketsphinxStt } from "../../../src/providers/speech/pocketsphinx/pocketsphinx-stt.js";
import type { CallerVoice, SpeechToText } from "../../../src/providers/speech/stt.js";
import { startFakeOpenAiSpeech, type FakeSpeechServer } from "../../support/fake-speech-servers.js";
import { concatSamples, espeakCli, silence, wordsOf } from "../../support/speech-audio.js";

/** What every speech-to-text adapter must do, on real speech made by espeak-ng. */
function sttConformance(name: string, make: () => SpeechToText) {
  describe(`speech-to-text conformance: ${name}`, () => {
    it("hears the words of a spoken question", async () => {
      const speech = await espeakCli("What are your opening hours?", { sampleRate: 16_000 });
      const heard = wordsOf(await make().transcribe(concatSamples(silence(200), speech.samples, silence(200))));
      // PocketSphinx hears eSpeak's voice imperfectly ("well you're opening hours"); the content word must be there.
      assert.ok(heard.includes("opening"), `heard "${heard.join(" ")}"`);
    });

    it("hears nothing in silence", async () => {
      assert.equal((await make().transcribe(silence(1000))).trim(), "");
    });

    it("keeps concurrent turns apart", async () => {
      const texts = ["What are your opening hours?", "Good morning, I would like to book a table."];
      const audio = await Promise.all(texts.map((text) => espeakCli(text, { sampleRate: 16_000 })));
      const [first, second] = await Promise.all(audio.map((clip) => make().transcribe(clip.samples)));
      assert.ok(wordsOf(first ?? "").includes("opening"), `first: ${first}`);
      assert.ok(wordsOf(second ?? "").includes("morning"), `second: ${second}`);
    });
  });
}

describe("speech-to-text", () => {
const pocketsphinx = new PocketsphinxStt("en-US", 2);
after(() => pocketsphinx.close());
sttConformance("pocketsphinx", () => pocketsphinx);

describe("pocketsphinx caller memory", () => {
  it("carries a caller's cepstral mean from turn to turn, and starts another caller on the same decoder afresh", async () => {
    const oneDecoder = new PocketsphinxStt("en-US", 1);
    try {
      const low = (await espeakCli("Good morning, I would like to book a table.", { sampleRate: 16_000, voice: "en-us" })).samples;
      const high = (await espeakCli("What are your opening hours on Friday?", { sampleRate: 16_000, voice: "en-us+f3" })).samples;
      const turn = async (caller: CallerVoice, samples: Int16Array) => {
        const stream = oneDecoder.stream([], caller);
        for (let at = 0; at < samples.length; at += 320) stream.write(samples.subarray(at, at + 320));
        await stream.finish();
        return Array.from(caller.cepstralState?.mean ?? []);
      };
      const largestGap = (a: number[], b: number[]) => Math.max(...a.map((value, index) => Math.abs(value - b[index]!)));
      const first: CallerVoice = {};
      await turn(first, low);
      const alone = await turn({}, high);
      assert.equal(alone.length, 13);
      // The front end's own state (its noise estimate) carries a little from turn to turn; the mean's does not.
      assert.ok(largestGap(await turn({}, high), alone) < 0.5, "a new caller starts as on a decoder that heard no one");
      assert.ok(largestGap(await turn(first, high), alone) > 2, "a caller's second turn starts from the mean the first left");
    } finally {
      oneDecoder.close();
    }
  });
});

let fake: FakeSpeechServer | undefined;
before(async () => {
  fake = await startFakeOpenAiSpeech();
});
after(async () => fake?.close());
const openAi = () => {
  if (!fake) throw new Error("fake server not started");
  return new OpenAiStt({ baseUrl: fake.baseUrl, apiKey: fake.apiKey, model: "whisper-1" }, "en-US");
};
sttConformance("openai", openAi);

describe("speech-to-text failures", () => {
  it("the openai adapter sends OpenAI's multipart fields, and the loopback server answers the official SDK alike", async () => {
    const server = fake!;
    const speech = await espeakCli("What are your opening hours?", { sampleRate: 16_000 });
    await openAi().transcribe(speech.samples);
    const last = server.requests.at(-1);
    assert.equal(last?.path, "/audio/transcriptions");
    assert.deepEqual(last?.fields, { model: "whisper-1", language: "en", response_format: "json" });
    const { default: OpenAI, toFile } = await import("openai");
    const client = new OpenAI({ apiKey: server.apiKey, baseURL: server.baseUrl });
    const { encodeWav } = await import("../../../src/providers/speech/audio.js");
    const result = await client.audio.transcriptions.create({ file: await toFile(encodeWav(speech), "turn.wav"), model: "whisper-1" });
    assert.ok(wordsOf(result.text).includes("opening"));
  });

  it("a vendor error is a SpeechProviderError with its status, retryable for 5xx", async () => {
    fake!.failNext(503);
    await assert.rejects(openAi().transcribe(silence(300)), (error: unknown) => error instanceof SpeechProviderError && error.status === 503 && error.retryable);
    const wrongKey = new OpenAiStt({ baseUrl: fake!.baseUrl, apiKey: "sk-wrong", model: "whisper-1" });
    await assert.rejects(wrongKey.transcribe(silence(300)), (error: unknown) => error instanceof SpeechProviderError && error.status === 401 && !error.retryable);
  });

  it("a missing pocketsphinx program or model is SpeechUnavailableError saying what to install", async () => {
    await assert.rejects(checkPocketsphinx("fr-FR"), (error: unknown) => error instanceof SpeechUnavailableError && /pocketsphinx model for fr-FR/.test(error.message));
    const missing = new PocketsphinxStt("en-US", 1, "pocketsphinx_not_installed");
    await assert.rejects(missing.transcribe(silence(100)), (error: unknown) => error instanceof SpeechUnavailableError && /apt-get install pocketsphinx/.test(error.message));
  });
});
});
