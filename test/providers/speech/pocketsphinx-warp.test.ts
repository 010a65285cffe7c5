import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { decodeWav, toPipelineRate } from "../../../src/providers/speech/audio.js";
import { Libpocketsphinx, type NativeDecoder } from "../../../src/providers/speech/pocketsphinx/libpocketsphinx.js";
import { HIGH_PITCH_WARP, modelFiles, PocketsphinxStt, RECOGNITION_SETTINGS, warpFor } from "../../../src/providers/speech/pocketsphinx/pocketsphinx-stt.js";
import type { CallerVoice, CepstralState } from "../../../src/providers/speech/stt.js";

const run = promisify(execFile);

/** A sentence of the speech benchmark in flite's `slt` voice (the high voice the warp is for), at 16 kHz. */
async function spoken(text: string): Promise<Int16Array> {
  const folder = await mkdtemp(path.join(tmpdir(), "parley-warp-"));
  try {
    await run("flite", ["-voice", "slt", "-t", text, "-o", path.join(folder, "s.wav")]);
    return toPipelineRate(decodeWav(await readFile(path.join(folder, "s.wav"))));
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}

/** The words and the best paths' scores of one utterance, streamed in 20 ms frames or given whole. */
async function heard(decoder: NativeDecoder, samples: Int16Array, fresh: CepstralState, whole: boolean): Promise<{ words: string; paths: { words: string; score: number }[] }> {
  decoder.setCepstralState(fresh);
  await decoder.start();
  if (whole) await decoder.feed(samples, true);
  else for (let at = 0; at < samples.length; at += 320) await decoder.feed(samples.subarray(at, at + 320));
  const words = await decoder.end();
  return { words, paths: decoder.alternatives(10) };
}

/**
 * A decoder's first utterance is heard a little differently from the next ones even from the same cepstral mean (its
 * front end's first frames), so two decoders made alike are compared utterance by utterance, in the same order.
 */
describe("pocketsphinx frequency warp", () => {
  const files = modelFiles("en-US");
  const decoders: NativeDecoder[] = [];
  let fresh: CepstralState;
  let samples: Int16Array;

  before(async () => {
    for (let made = 0; made < 2; made++) decoders.push(await Libpocketsphinx.load().decoder({ "-hmm": files.hmm, "-lm": files.lm, "-dict": files.dict, ...RECOGNITION_SETTINGS }));
    fresh = decoders[0]!.cepstralState()!;
    samples = await spoken("i would like to book a cleaning appointment for next tuesday");
  });
  after(() => decoders.forEach((decoder) => decoder.free()));

  it("Parley's front end at warp 1 hears exactly what a decoder's own does (same words, same path scores), streamed or given whole", async () => {
    const [own, parleys] = decoders as [NativeDecoder, NativeDecoder];
    assert.ok(parleys.warpable);
    parleys.setWarp(1);
    for (const whole of [false, false, true]) {
      const expected = await heard(own, samples, fresh, whole);
      assert.notEqual(expected.words, "");
      assert.deepEqual(await heard(parleys, samples, fresh, whole), expected, whole ? "given whole" : "streamed");
    }
  });

  it("a warped front end changes what the decoder hears", async () => {
    const [own, parleys] = decoders as [NativeDecoder, NativeDecoder];
    parleys.setWarp(1.25);
    assert.notDeepEqual((await heard(parleys, samples, fresh, false)).paths, (await heard(own, samples, fresh, false)).paths);
  });

  it("a caller's pitch is learnt from the turn heard, and chooses the warp of the caller's next turns", async () => {
    const stt = new PocketsphinxStt("en-US", 1);
    try {
      const caller: CallerVoice = {};
      const stream = stt.stream([], caller);
      for (let at = 0; at < samples.length; at += 320) stream.write(samples.subarray(at, at + 320));
      assert.notEqual(await stream.finish(), "");
      await new Promise((resolve) => setImmediate(resolve));
      assert.ok(caller.cepstralState, "the cepstral mean is still learnt");
      assert.equal(warpFor(caller.pitch), HIGH_PITCH_WARP);
    } finally {
      stt.close();
    }
  });
});
