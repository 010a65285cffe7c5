import type { PcmAudio } from "./audio.js";
import type { WordTiming } from "./tts.js";

/** What a speaker does after a word: run on into the next, pause briefly (, ; : –) or pause at a sentence end. */
export type PauseAfter = "word" | "clause" | "sentence";

export interface SpeechToken {
  word: string;
  pauseAfter: PauseAfter;
}

const EDGE_PUNCTUATION = /^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu;

function pauseOf(raw: string): PauseAfter {
  const trailing = /[^\p{L}\p{N}]*$/u.exec(raw)?.[0] ?? "";
  if (/[.!?…]/u.test(trailing)) return "sentence";
  if (/[,;:—–-]/u.test(trailing)) return "clause";
  return "word";
}

/**
 * The words of a text as they are reported in word timings: whitespace-separated tokens with the punctuation at their
 * edges removed ("Hello," → "Hello", "don't" stays). A token with no letter or digit (a lone dash) is not a word; its
 * pause goes to the word before it.
 */
export function speechTokens(text: string): SpeechToken[] {
  const tokens: SpeechToken[] = [];
  for (const raw of text.split(/\s+/u)) {
    if (raw === "") continue;
    const word = raw.replace(EDGE_PUNCTUATION, "");
    const pauseAfter = pauseOf(raw);
    const previous = tokens.at(-1);
    if (word !== "") tokens.push({ word, pauseAfter });
    else if (previous && pauseAfter !== "word" && previous.pauseAfter !== "sentence") previous.pauseAfter = pauseAfter;
  }
  return tokens;
}

/**
 * How long a word takes relative to others, in letter units: spoken length grows with the letters, a digit is read as
 * a whole word ("9" → "nine"), and even "a" takes a moment.
 */
function wordWeight(word: string): number {
  const letters = word.match(/\p{L}/gu)?.length ?? 0;
  const digits = word.match(/\p{N}/gu)?.length ?? 0;
  return Math.max(2, letters + 3.5 * digits);
}

/** The expected pause after a word, in the same letter units, so that expected boundaries leave room for it. */
const PAUSE_WEIGHT: Record<PauseAfter, number> = { word: 0.5, clause: 3, sentence: 5 };

const FRAME_SECONDS = 0.005;
/** Silences shorter than this are not taken as word boundaries: the closure of a stop consonant can be as long. */
const MIN_GAP_SECONDS = 0.02;
/** Below this fraction of the loudest frame a frame is silent; synthesized silence is digital zero, so this is low. */
const SILENCE_RATIO = 0.004;

const SKIP_GAP = 0;
const SKIP_BOUNDARY = 1;
const MATCH = 2;

interface Gap {
  start: number;
  end: number;
}

/** Maps a point in "letter units" (the running sum of word and pause weights) to a time, piecewise linearly. */
interface Anchor {
  x: number;
  t: number;
}

/** The RMS level of each frame, and the frame's exact length (5 ms rounded to whole samples). */
function frameLevels(audio: PcmAudio): { levels: number[]; frameSeconds: number } {
  const frame = Math.max(1, Math.round(audio.sampleRate * FRAME_SECONDS));
  const levels: number[] = [];
  for (let start = 0; start < audio.samples.length; start += frame) {
    const end = Math.min(audio.samples.length, start + frame);
    let energy = 0;
    for (let i = start; i < end; i++) energy += (audio.samples[i] ?? 0) ** 2;
    levels.push(Math.sqrt(energy / (end - start)));
  }
  return { levels, frameSeconds: frame / audio.sampleRate };
}

function interpolate(anchors: readonly Anchor[], x: number): number {
  const right = anchors.findIndex((anchor) => anchor.x >= x);
  const a = anchors[right - 1];
  const b = anchors[right];
  if (!a || !b) return (right === -1 ? anchors.at(-1) : anchors[0])?.t ?? 0;
  return b.x === a.x ? a.t : a.t + ((x - a.x) / (b.x - a.x)) * (b.t - a.t);
}

/** A silence at least this long is a pause rather than the joint between two words or a stop consonant. */
const LONG_GAP_SECONDS = 0.12;

interface ExpectedBoundary {
  time: number;
  /** After a comma or a sentence end, where a synthesizer pauses. */
  punctuated: boolean;
}

/**
 * How much a silence speaks for a boundary beyond its distance: a pause where punctuation calls for one is the
 * strongest evidence there is, a short silence at a plain boundary is what `-g` inserts, and a pause where no
 * punctuation is more likely belongs to a neighbouring punctuated boundary.
 */
function gapBonus(boundary: ExpectedBoundary, gap: Gap): number {
  const long = gap.end - gap.start >= LONG_GAP_SECONDS;
  if (boundary.punctuated) return long ? 1.5 : 0;
  return long ? -0.5 : 0.5;
}

/**
 * Chooses, for each boundary between words, the silence that best explains it: a monotonic alignment (as in edit
 * distance) of expected boundaries to the detected silences, where a match costs its distance in tolerances less
 * `gapBonus`, leaving a boundary unmatched costs 1, and silences inside words cost nothing. Punctuated boundaries
 * get twice the tolerance, since their pauses are what the proportional estimate drifts around least.
 */
function matchGaps(expected: readonly ExpectedBoundary[], gaps: readonly Gap[], tolerance: number): (Gap | undefined)[] {
  const width = gaps.length + 1;
  const cost = new Float64Array((expected.length + 1) * width);
  const step = new Uint8Array(cost.length);
  const at = (k: number, j: number): number => cost[k * width + j] ?? 0;
  for (let k = 1; k <= expected.length; k++) {
    cost[k * width] = k;
    step[k * width] = SKIP_BOUNDARY;
    const boundary = expected[k - 1] ?? { time: 0, punctuated: false };
    const reach = boundary.punctuated ? 2 * tolerance : tolerance;
    for (let j = 1; j <= gaps.length; j++) {
      const options: [number, number][] = [
        [at(k, j - 1), SKIP_GAP],
        [at(k - 1, j) + 1, SKIP_BOUNDARY],
      ];
      const gap = gaps[j - 1];
      const distance = gap ? Math.abs((gap.start + gap.end) / 2 - boundary.time) / reach : Infinity;
      if (gap && distance < 1) options.push([at(k - 1, j - 1) + distance - gapBonus(boundary, gap), MATCH]);
      const [best, how] = options.reduce((a, b) => (b[0] < a[0] ? b : a));
      cost[k * width + j] = best;
      step[k * width + j] = how;
    }
  }
  const matched: (Gap | undefined)[] = new Array(expected.length).fill(undefined);
  for (let k = expected.length, j = gaps.length; k > 0; ) {
    const how = step[k * width + j];
    if (how === MATCH) matched[--k] = gaps[--j];
    else if (how === SKIP_BOUNDARY) k--;
    else j--;
  }
  return matched;
}

/**
 * Word timings for synthesized speech whose synthesizer reports none (eSpeak NG's command line does not):
 * 1. the voiced region runs from the first to the last frame (5 ms) above the silence level;
 * 2. each word gets a share of it proportional to its weight (letters, digits read as words), with room for the pause
 *    its punctuation calls for, which gives an expected time for every boundary between words;
 * 3. silences of at least 20 ms inside the region are matched to those expected boundaries (see `matchGaps`); a
 *    matched boundary ends the word where the silence starts and starts the next where it ends;
 * 4. unmatched boundaries are placed by the same proportions between the nearest matched ones, then moved to the
 *    quietest frame within a short window, which is where one word most likely hands over to the next.
 * The result has one entry per token, in order, with start ≤ end ≤ next start, all inside the clip.
 */
export function alignWords(audio: PcmAudio, tokens: readonly SpeechToken[]): WordTiming[] {
  const duration = audio.samples.length / audio.sampleRate;
  const { levels, frameSeconds } = frameLevels(audio);
  const peak = levels.reduce((max, level) => Math.max(max, level), 0);
  const silence = Math.max(peak * SILENCE_RATIO, 1);
  const isSilent = (frame: number): boolean => (levels[frame] ?? 0) <= silence;
  const first = levels.findIndex((level) => level > silence);
  let last = levels.length - 1;
  while (last >= 0 && (levels[last] ?? 0) <= silence) last--;
  const regionStart = first === -1 ? 0 : first * frameSeconds;
  const regionEnd = first === -1 ? duration : Math.min(duration, (last + 1) * frameSeconds);

  const gaps: Gap[] = [];
  for (let f = Math.max(first, 0); f <= last; f++) {
    if (!isSilent(f)) continue;
    const start = f;
    while (f <= last && isSilent(f)) f++;
    if ((f - start) * frameSeconds >= MIN_GAP_SECONDS) gaps.push({ start: start * frameSeconds, end: f * frameSeconds });
  }

  // Each word's span in letter units; the pause after a word lies between its end and the next word's start.
  const spans: { start: number; end: number }[] = [];
  let x = 0;
  for (const token of tokens) {
    spans.push({ start: x, end: x + wordWeight(token.word) });
    x += wordWeight(token.word) + PAUSE_WEIGHT[token.pauseAfter];
  }
  const total = spans.at(-1)?.end ?? 0;
  const boundaries = spans.slice(1).map((next, k) => ({ before: spans[k]?.end ?? 0, after: next.start }));
  const scale = total === 0 ? 0 : (regionEnd - regionStart) / total;
  const tolerance = Math.max(0.12, 0.6 * ((regionEnd - regionStart) / Math.max(1, tokens.length)));
  const midpoints = boundaries.map((b) => (b.before + b.after) / 2);
  const expected = midpoints.map((m, k) => ({ time: regionStart + m * scale, punctuated: tokens[k]?.pauseAfter !== "word" }));
  const matched = matchGaps(expected, gaps, tolerance);

  const anchors: Anchor[] = [{ x: 0, t: regionStart }];
  boundaries.forEach((boundary, k) => {
    const gap = matched[k];
    if (gap) anchors.push({ x: boundary.before, t: gap.start }, { x: boundary.after, t: gap.end });
  });
  anchors.push({ x: total, t: regionEnd });

  const window = Math.min(0.05, tolerance / 2);
  const cuts: Gap[] = [];
  midpoints.forEach((midpoint, k) => {
    const gap = matched[k];
    if (gap) {
      cuts.push(gap);
      return;
    }
    const guess = interpolate(anchors, midpoint);
    const nextGap = matched.slice(k + 1).find((later) => later !== undefined);
    const low = Math.max(cuts.at(-1)?.end ?? regionStart, guess - window);
    const high = Math.max(low, Math.min(nextGap ? nextGap.start : regionEnd, guess + window));
    let best = Math.min(Math.max(guess, low), high);
    let bestLevel = levels[Math.round(best / frameSeconds)] ?? Infinity;
    for (let f = Math.ceil(low / frameSeconds); f * frameSeconds <= high; f++) {
      const level = levels[f] ?? Infinity;
      if (level < bestLevel) {
        best = f * frameSeconds;
        bestLevel = level;
      }
    }
    cuts.push({ start: best, end: best });
  });
  return tokens.map((token, i) => {
    const start = cuts[i - 1]?.end ?? regionStart;
    return { word: token.word, start, end: Math.max(start, cuts[i]?.start ?? regionEnd) };
  });
}
