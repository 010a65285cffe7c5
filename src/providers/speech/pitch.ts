/**
 * The pitch (fundamental frequency) of a voice, by autocorrelation of 40 ms frames every 20 ms, on the samples
 * halved to 8 kHz (pairs averaged: enough below 4 kHz for a voice's fundamental, a quarter of the work).
 */
const RATE = 8_000;
const FRAME = 320;
const HOP = 160;
const LOWEST_HZ = 60;
const HIGHEST_HZ = 400;
/** A frame is voiced when it repeats itself this well at its period (normalized autocorrelation). */
const VOICED_CORRELATION = 0.6;
/** …and is no quieter than this fraction of the loudest frame's energy (silence and breath are not voiced). */
const VOICED_ENERGY = 0.02;
/** The shortest period correlating within this fraction of the best: a period's multiples correlate nearly as well. */
const OCTAVE_TOLERANCE = 0.9;

/** The pitch of each voiced frame of 16 kHz samples, in Hz. */
export function voicedPitches(samples: Int16Array): number[] {
  const halved = new Float32Array(samples.length >> 1);
  for (let index = 0; index < halved.length; index++) halved[index] = (samples[2 * index]! + samples[2 * index + 1]!) / 2;
  const shortest = Math.floor(RATE / HIGHEST_HZ);
  const longest = Math.ceil(RATE / LOWEST_HZ);
  const frames: { start: number; energy: number }[] = [];
  let loudest = 0;
  for (let start = 0; start + FRAME + longest <= halved.length; start += HOP) {
    let energy = 0;
    for (let index = start; index < start + FRAME; index++) energy += halved[index]! * halved[index]!;
    frames.push({ start, energy });
    loudest = Math.max(loudest, energy);
  }
  const pitches: number[] = [];
  const correlations = new Float32Array(longest + 1);
  for (const { start, energy } of frames) {
    if (energy === 0 || energy < VOICED_ENERGY * loudest) continue;
    let best = 0;
    for (let lag = shortest; lag <= longest; lag++) {
      let product = 0;
      let lagged = 0;
      for (let index = start; index < start + FRAME; index++) {
        const later = halved[index + lag]!;
        product += halved[index]! * later;
        lagged += later * later;
      }
      correlations[lag] = lagged > 0 ? product / Math.sqrt(energy * lagged) : 0;
      best = Math.max(best, correlations[lag]!);
    }
    if (best < VOICED_CORRELATION) continue;
    for (let lag = shortest; lag <= longest; lag++) {
      const isPeak = correlations[lag]! >= correlations[lag - 1]! && correlations[lag]! >= (correlations[lag + 1] ?? 0);
      if (isPeak && correlations[lag]! >= OCTAVE_TOLERANCE * best) {
        pitches.push(RATE / lag);
        break;
      }
    }
  }
  return pitches;
}
