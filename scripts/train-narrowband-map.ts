/**
 * Learns the narrowband → wideband cepstral maps of src/providers/speech/pocketsphinx/narrowband-map.ts (see
 * docs/voice.md, the Speech-to-text stage and "Choosing the offline engines"): flite's wideband voices rms, awb and slt speak the Harvard sentences of
 * bench/speech/narrowband-training.json; each sentence is heard as it is and through a narrowband channel, by the
 * front end Parley's decoders use (sphinxbase's, with the model's feat.params), and the map from the narrowband
 * frame to the same frame of the wideband audio is fitted by least squares. `kal16` is left out: it is the speaker of
 * `kal`, on which the map is measured. Deterministic: `npx tsx scripts/train-narrowband-map.ts` rewrites the file.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { CEPSTRUM_LENGTH, Libpocketsphinx } from "../src/providers/speech/pocketsphinx/libpocketsphinx.js";
import { modelFiles } from "../src/providers/speech/pocketsphinx/pocketsphinx-stt.js";
import { CHANNELS, TRAINING_VOICES, run, samplesOf, trainingSentences, type Channel } from "./narrowband-channels.js";

/** Keeps the fit well-posed where a coefficient barely varies (added to the normal equations' diagonal). */
const RIDGE = 1e-3;

/** Solves (A + ridge·I) x = b for each column of b by Gaussian elimination with partial pivoting. */
function solve(a: Float64Array[], b: Float64Array[]): Float64Array[] {
  const n = a.length;
  const m = a.map((row, index) => Float64Array.from([...row.map((value, column) => value + (column === index ? RIDGE : 0)), ...b[index]!]));
  for (let column = 0; column < n; column++) {
    let pivot = column;
    for (let row = column + 1; row < n; row++) if (Math.abs(m[row]![column]!) > Math.abs(m[pivot]![column]!)) pivot = row;
    [m[column], m[pivot]] = [m[pivot]!, m[column]!];
    for (let row = 0; row < n; row++) {
      if (row === column) continue;
      const factor = m[row]![column]! / m[column]![column]!;
      for (let k = column; k < m[row]!.length; k++) m[row]![k]! -= factor * m[column]![k]!;
    }
  }
  return m.map((row, index) => row.slice(n).map((value) => value / m[index]![index]!));
}

/**
 * Classes of narrowband frames, each with its own affine map (by k-means over the frames' shapes): `kal` streamed as
 * whole utterances was heard at 15.4% WER with one map, 14.1% with 8, 13.2% with 16, 16.7% with 32 (docs/voice.md).
 */
const CLASSES = 16;
const KMEANS_ROUNDS = 20;

interface Pair {
  narrow: Float32Array;
  wide: Float32Array;
}


/** Squared distance of a frame's shape (coefficients 1–12: not c0, the loudness) to a centroid. */
function distance(cepstra: Float32Array, frame: number, centroid: Float64Array): number {
  let sum = 0;
  for (let k = 1; k < CEPSTRUM_LENGTH; k++) sum += (cepstra[frame * CEPSTRUM_LENGTH + k]! - centroid[k - 1]!) ** 2;
  return sum;
}

function nearest(cepstra: Float32Array, frame: number, centroids: Float64Array[]): number {
  let best = 0;
  for (let index = 1; index < centroids.length; index++) if (distance(cepstra, frame, centroids[index]!) < distance(cepstra, frame, centroids[best]!)) best = index;
  return best;
}

/** k-means over the narrowband frames' shapes, seeded with evenly spaced frames. */
function centroidsOf(pairs: Pair[]): Float64Array[] {
  const all: { cepstra: Float32Array; frame: number }[] = pairs.flatMap(({ narrow }) => Array.from({ length: narrow.length / CEPSTRUM_LENGTH }, (_, frame) => ({ cepstra: narrow, frame })));
  let centroids = Array.from({ length: CLASSES }, (_, index) => {
    const { cepstra, frame } = all[Math.floor(((index + 0.5) * all.length) / CLASSES)]!;
    return Float64Array.from({ length: CEPSTRUM_LENGTH - 1 }, (_, k) => cepstra[frame * CEPSTRUM_LENGTH + k + 1]!);
  });
  for (let round = 0; round < KMEANS_ROUNDS; round++) {
    const sums = centroids.map(() => new Float64Array(CEPSTRUM_LENGTH - 1));
    const counts = new Array<number>(CLASSES).fill(0);
    for (const { cepstra, frame } of all) {
      const index = nearest(cepstra, frame, centroids);
      counts[index]!++;
      for (let k = 1; k < CEPSTRUM_LENGTH; k++) sums[index]![k - 1]! += cepstra[frame * CEPSTRUM_LENGTH + k]!;
    }
    centroids = centroids.map((centroid, index) => (counts[index]! > 0 ? sums[index]!.map((sum) => sum / counts[index]!) : centroid));
  }
  return centroids;
}

/** Per class, the affine map (13 × 13 matrix, row-major, and offset) fitting wide ≈ matrix · narrow + offset. */
function fit(pairs: Pair[]): { classes: { centroid: number[]; matrix: number[]; offset: number[] }[] } {
  const size = CEPSTRUM_LENGTH + 1;
  const centroids = centroidsOf(pairs);
  const classes = centroids.map((centroid) => ({ centroid, xtx: Array.from({ length: size }, () => new Float64Array(size)), xty: Array.from({ length: size }, () => new Float64Array(CEPSTRUM_LENGTH)) }));
  const input = new Float64Array(size);
  for (const { narrow, wide } of pairs) {
    const frames = Math.min(narrow.length, wide.length) / CEPSTRUM_LENGTH;
    for (let frame = 0; frame < frames; frame++) {
      input.set(narrow.subarray(frame * CEPSTRUM_LENGTH, (frame + 1) * CEPSTRUM_LENGTH));
      input[CEPSTRUM_LENGTH] = 1;
      const { xtx, xty } = classes[nearest(narrow, frame, centroids)]!;
      for (let i = 0; i < size; i++) {
        for (let j = 0; j < size; j++) xtx[i]![j]! += input[i]! * input[j]!;
        for (let j = 0; j < CEPSTRUM_LENGTH; j++) xty[i]![j]! += input[i]! * wide[frame * CEPSTRUM_LENGTH + j]!;
      }
    }
  }
  return {
    classes: classes.map(({ centroid, xtx, xty }) => {
      // Row i of the solution weighs input i for every output: the matrix is its transpose.
      const weights = solve(xtx, xty);
      const matrix: number[] = [];
      for (let out = 0; out < CEPSTRUM_LENGTH; out++) for (let at = 0; at < size - 1; at++) matrix.push(weights[at]![out]!);
      return { centroid: round(Array.from(centroid)), matrix: round(matrix), offset: round(Array.from(weights[size - 1]!)) };
    }),
  };
}

const round = (values: number[]) => values.map((value) => Number(value.toPrecision(6)));

const sentences = await trainingSentences();
const files = modelFiles("en-US");
const library = Libpocketsphinx.load();
// Every frame kept (no speech detection), so that the two versions of a sentence have the same frames.
const frontEnd = library.frontEnd({ "-hmm": files.hmm, "-lm": files.lm, "-dict": files.dict, "-remove_silence": "no" }, 1);
const pairs: Record<keyof typeof CHANNELS, Pair[]> = { resampled: [], telephone: [] };
const folder = await mkdtemp(path.join(tmpdir(), "parley-narrowband-"));
try {
  for (const voice of TRAINING_VOICES) {
    for (const sentence of sentences) {
      const wav = path.join(folder, "wide.wav");
      await run("flite", ["-voice", voice, "-t", sentence, "-o", wav]);
      const wide = await library.utteranceCepstra(frontEnd, await samplesOf(wav));
      for (const [name, channel] of Object.entries(CHANNELS) as [keyof typeof CHANNELS, Channel][]) {
        pairs[name].push({ narrow: await library.utteranceCepstra(frontEnd, await channel(wav, folder)), wide });
      }
    }
  }
} finally {
  library.freeFrontEnd(frontEnd);
  await rm(folder, { recursive: true, force: true });
}
const frames = pairs.resampled.reduce((sum, pair) => sum + pair.wide.length / CEPSTRUM_LENGTH, 0);
const maps = Object.fromEntries(Object.entries(pairs).map(([name, pairsOf]) => [name, fit(pairsOf)]));
const target = new URL("../src/providers/speech/pocketsphinx/narrowband-map.ts", import.meta.url);
await writeFile(
  target,
  `/**
 * Narrowband → wideband cepstral maps, written by scripts/train-narrowband-map.ts (do not edit): fitted by least
 * squares on ${frames} frames of flite's ${TRAINING_VOICES.join(", ")} speaking the ${sentences.length} sentences of
 * bench/speech/narrowband-training.json. \`matrix\` is 13 × 13, row-major: wideband = matrix · narrowband + offset.
 */
export const NARROWBAND_MAPS = {
${Object.entries(maps).map(([name, { classes }]) => `  ${name}: {\n    classes: [\n${classes.map((entry) => `      ${JSON.stringify(entry)},\n`).join("")}    ],\n  },\n`).join("")}} as const;
`,
);
console.log(`${frames} frames per channel → ${target.pathname}`);
