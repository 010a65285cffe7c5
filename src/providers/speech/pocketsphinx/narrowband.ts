import type { CallerVoice } from "../stt.js";
import { CEPSTRUM_LENGTH } from "./libpocketsphinx.js";
import { NARROWBAND_MAPS } from "./narrowband-map.js";

/**
 * Narrowband callers: audio that was 8 kHz (a phone line, a voice recorded at 8 kHz) reaches the recognizer resampled
 * to 16 kHz with nothing above 4 kHz, which pocketsphinx's 16 kHz model never heard. Its cepstra are mapped towards
 * those of the same speech heard wideband before they are searched (scripts/train-narrowband-map.ts, docs/voice.md).
 */
export type NarrowbandChannel = NonNullable<CallerVoice["channel"]> | "resampled";

/** A piecewise affine map of cepstra: each frame by the class of its nearest centroid (coefficients 1–12). */
export class CepstralMap {
  private constructor(private readonly classes: readonly { centroid: readonly number[]; matrix: readonly number[]; offset: readonly number[] }[]) {}

  private static readonly maps = new Map<NarrowbandChannel, CepstralMap>();

  static of(channel: NarrowbandChannel): CepstralMap {
    let map = CepstralMap.maps.get(channel);
    if (!map) {
      map = new CepstralMap(NARROWBAND_MAPS[channel].classes);
      CepstralMap.maps.set(channel, map);
    }
    return map;
  }

  /** Maps frames × 13 coefficients in place. */
  apply(cepstra: Float32Array): void {
    const frame = new Float32Array(CEPSTRUM_LENGTH);
    for (let at = 0; at < cepstra.length; at += CEPSTRUM_LENGTH) {
      frame.set(cepstra.subarray(at, at + CEPSTRUM_LENGTH));
      const { matrix, offset } = this.classes[this.nearest(frame)]!;
      for (let out = 0; out < CEPSTRUM_LENGTH; out++) {
        let value = offset[out]!;
        for (let input = 0; input < CEPSTRUM_LENGTH; input++) value += matrix[out * CEPSTRUM_LENGTH + input]! * frame[input]!;
        cepstra[at + out] = value;
      }
    }
  }

  private nearest(frame: Float32Array): number {
    let best = 0;
    let bestDistance = Infinity;
    // Indexed rather than through an iterator: this runs for every 10 ms frame of a narrowband caller.
    for (let index = 0; index < this.classes.length; index++) {
      const { centroid } = this.classes[index]!;
      let distance = 0;
      for (let k = 1; k < CEPSTRUM_LENGTH; k++) distance += (frame[k]! - centroid[k - 1]!) ** 2;
      if (distance < bestDistance) {
        best = index;
        bestDistance = distance;
      }
    }
    return best;
  }
}

/**
 * A high-pass filter from 5 kHz at 16 kHz (a Hamming-windowed sinc, 63 taps): what it passes of speech resampled from
 * 8 kHz is its resampler's dither and ringing, while a wideband voice's fricatives and upper formants put energy
 * there. Above the 4 kHz edge itself, so that the filter's transition band does not pass the narrowband audio's top.
 */
const HIGH_PASS_TAPS = 63;
const HIGH_PASS_FROM = 5_000 / 16_000;
const highPass = (() => {
  const middle = (HIGH_PASS_TAPS - 1) / 2;
  const lowPass = Array.from({ length: HIGH_PASS_TAPS }, (_, index) => {
    const x = index - middle;
    const sinc = x === 0 ? 2 * HIGH_PASS_FROM : Math.sin(2 * Math.PI * HIGH_PASS_FROM * x) / (Math.PI * x);
    return sinc * (0.54 - 0.46 * Math.cos((2 * Math.PI * index) / (HIGH_PASS_TAPS - 1)));
  });
  return Float64Array.from(lowPass, (value, index) => (index === middle ? 1 : 0) - value);
})();

/** Every other output sample is enough for an energy: half the work. */
const ENERGY_STEP = 2;

/** The energy of 16 kHz samples above 5 kHz and in all (sums of squares over the samples looked at). */
export function bandEnergies(samples: Int16Array): { upper: number; total: number } {
  let upper = 0;
  let total = 0;
  for (let at = HIGH_PASS_TAPS - 1; at < samples.length; at += ENERGY_STEP) {
    let filtered = 0;
    for (let tap = 0; tap < HIGH_PASS_TAPS; tap++) filtered += highPass[tap]! * samples[at - tap]!;
    upper += filtered * filtered;
    total += samples[at]! * samples[at]!;
  }
  return { upper, total };
}

/** `band` with the energies of `samples` added. */
export function withBandOf(samples: Int16Array, band: CallerVoice["band"] = { upper: 0, total: 0 }): NonNullable<CallerVoice["band"]> {
  const heard = bandEnergies(samples);
  return { upper: band.upper + heard.upper, total: band.total + heard.total };
}

/**
 * A caller is narrowband when the energy above 5 kHz is below this share of the whole (−58 dB), once the audio heard
 * carries enough energy to tell (not silence or a breath). Measured per sentence (20 of the benchmark's): `kal` and
 * wideband voices resampled through 8 kHz by sox −68 to −66 dB; flite's wideband voices −51 (`awb`'s quietest) to −13 dB.
 */
export const NARROWBAND_SHARE = 10 ** -5.8;
const LEAST_ENERGY = 1e9;

/** The channel a caller's audio came through, when it is narrowband: declared by the transport, else told by its band. */
export function narrowbandChannel(caller: CallerVoice | undefined, band: CallerVoice["band"] = caller?.band): NarrowbandChannel | undefined {
  if (caller?.channel) return caller.channel;
  if (!band || band.total < LEAST_ENERGY) return undefined;
  return band.upper < NARROWBAND_SHARE * band.total ? "resampled" : undefined;
}
