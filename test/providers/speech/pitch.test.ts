import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { voicedPitches } from "../../../src/providers/speech/pitch.js";
import { HIGH_PITCH_HZ, HIGH_PITCH_WARP, warpFor, withPitchOf } from "../../../src/providers/speech/pocketsphinx/pocketsphinx-stt.js";

/** A buzz at `hz` (a few harmonics, the strongest not the fundamental, as a voice's), 16 kHz, between silences. */
function buzz(hz: number, seconds: number): Int16Array {
  const samples = new Int16Array(Math.round(16_000 * (seconds + 0.4)));
  for (let index = 3_200; index < samples.length - 3_200; index++) {
    const t = index / 16_000;
    samples[index] = Math.round(3_000 * Math.sin(2 * Math.PI * hz * t) + 5_000 * Math.sin(4 * Math.PI * hz * t) + 2_000 * Math.sin(6 * Math.PI * hz * t));
  }
  return samples;
}

describe("pitch", () => {
  for (const hz of [95, 130, 170, 220]) {
    it(`finds ${hz} Hz in the voiced frames, not its octaves, and none in the silences`, () => {
      const pitches = voicedPitches(buzz(hz, 1));
      assert.ok(pitches.length >= 45 && pitches.length <= 52, `${pitches.length} voiced frames in one second`);
      for (const found of pitches) assert.ok(Math.abs(found - hz) / hz < 0.03, `${found.toFixed(1)} Hz`);
    });
  }

  it("finds nothing in noise or silence", () => {
    let seed = 1;
    const noise = Int16Array.from({ length: 16_000 }, () => ((seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31 - 0.5) * 8_000);
    assert.equal(voicedPitches(noise).length, 0);
    assert.equal(voicedPitches(new Int16Array(16_000)).length, 0);
  });

  it(`warps a voice averaging ${HIGH_PITCH_HZ} Hz or more by ${HIGH_PITCH_WARP}, a lower one or one barely heard not at all`, () => {
    assert.equal(warpFor(undefined), 1);
    assert.equal(warpFor(withPitchOf(buzz(120, 1))), 1);
    assert.equal(warpFor(withPitchOf(buzz(180, 1))), HIGH_PITCH_WARP);
    assert.equal(warpFor(withPitchOf(buzz(180, 0.1))), 1);
    assert.equal(warpFor(withPitchOf(buzz(180, 1), withPitchOf(buzz(100, 3)))), 1, "the turns heard before count");
  });
});
