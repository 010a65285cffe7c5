import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { mixInto, pcmFromBytes, pcmToBytes, resample } from "../../../src/providers/speech/audio.js";
import { decodeMuLaw, decodeMuLawSample, encodeMuLaw, encodeMuLawSample } from "../../../src/providers/speech/mulaw.js";

function sine(frequency: number, sampleRate: number, ms: number, amplitude = 10_000): Int16Array {
  const out = new Int16Array(Math.round((sampleRate * ms) / 1000));
  for (let i = 0; i < out.length; i++) out[i] = Math.round(amplitude * Math.sin((2 * Math.PI * frequency * i) / sampleRate));
  return out;
}

function rms(samples: Int16Array): number {
  let sum = 0;
  for (const sample of samples) sum += sample * sample;
  return Math.sqrt(sum / Math.max(1, samples.length));
}

describe("audio formats", () => {
  it("μ-law matches G.711's reference points and round-trips within its quantization step", () => {
    assert.equal(encodeMuLawSample(0), 0xff);
    assert.equal(encodeMuLawSample(-1), 0x7f);
    assert.equal(encodeMuLawSample(32767), 0x80);
    assert.equal(encodeMuLawSample(-32768), 0x00);
    assert.equal(decodeMuLawSample(0xff), 0);
    assert.equal(decodeMuLawSample(0x80), 32124);
    assert.equal(decodeMuLawSample(0x00), -32124);
    for (let byte = 0; byte < 256; byte++) assert.equal(encodeMuLawSample(decodeMuLawSample(byte)) , byte === 0x7f ? 0xff : byte);
    for (let sample = -32000; sample <= 32000; sample += 37) {
      const error = Math.abs(decodeMuLawSample(encodeMuLawSample(sample)) - sample);
      assert.ok(error <= Math.max(8, Math.abs(sample) / 16), `${sample} came back off by ${error}`);
    }
    const tone = sine(440, 8000, 100);
    assert.ok(Math.abs(rms(decodeMuLaw(encodeMuLaw(tone))) - rms(tone)) < rms(tone) * 0.02);
  });

  it("resampling keeps the duration and the tone, and 16 kHz → 8 kHz removes what 8 kHz cannot carry", () => {
    const voice = sine(440, 16_000, 500);
    const down = resample(voice, 16_000, 8000);
    assert.equal(down.length, 4000);
    assert.ok(Math.abs(rms(down) - rms(voice)) < rms(voice) * 0.05);
    const back = resample(down, 8000, 16_000);
    assert.equal(back.length, voice.length);
    assert.ok(Math.abs(rms(back) - rms(voice)) < rms(voice) * 0.05);
    // 7.9 kHz would fold back to 100 Hz at 8 kHz; the low-pass takes most of it away.
    assert.ok(rms(resample(sine(7900, 16_000, 500), 16_000, 8000)) < rms(voice) * 0.1);
    assert.equal(resample(sine(300, 22_050, 1000), 22_050, 16_000).length, 16_000);
  });

  it("PCM bytes are little-endian and mixing saturates instead of wrapping", () => {
    const samples = Int16Array.from([0, 1, -1, 32767, -32768]);
    const bytes = pcmToBytes(samples);
    assert.deepEqual([...bytes.subarray(0, 6)], [0, 0, 1, 0, 0xff, 0xff]);
    assert.deepEqual([...pcmFromBytes(bytes)], [...samples]);
    const track = Int16Array.from([30_000, -30_000, 5]);
    mixInto(track, Int16Array.from([10_000, -10_000]), 0);
    assert.deepEqual([...track], [32767, -32768, 5]);
  });
});
