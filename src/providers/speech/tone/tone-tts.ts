import type { SpokenText, TextToSpeech, WordTiming } from "../tts.js";
import { type PauseAfter, type SpeechToken, speechTokens } from "../word-timing.js";

const SAMPLE_RATE = 22050;
const LEAD_IN_SECONDS = 0.05;
const PAUSE_SECONDS: Record<PauseAfter, number> = { word: 0.07, clause: 0.2, sentence: 0.38 };
const ONSET_SECONDS = 0.02;
const PEAK = 9000;

/** The first two formants (Hz) of the vowel a vowel letter most often stands for in English. */
const FORMANTS: Record<string, [number, number]> = {
  a: [730, 1090],
  e: [530, 1840],
  i: [270, 2290],
  o: [570, 840],
  u: [300, 870],
};

/** A schwa, for words without a vowel letter ("hmm", "Mr"). */
const NEUTRAL_VOWEL: [number, number] = [500, 1500];

interface VoiceShape {
  /** Pitch at the start of an utterance; it falls by a tenth towards the end, as statements do. */
  pitch: number;
  syllableSeconds: number;
}

/** Two voices told apart by ear: a lower, slower one (a call's agent) and a higher, quicker one (its caller). */
export type ToneVoice = "lower" | "higher";

const VOICES: Record<ToneVoice, VoiceShape> = {
  lower: { pitch: 115, syllableSeconds: 0.15 },
  higher: { pitch: 210, syllableSeconds: 0.13 },
};

interface Syllable {
  formants: [number, number];
  /** Whether a consonant comes before the vowel, rendered as a short burst of noise. */
  onset: boolean;
}

/**
 * One syllable per group of vowel letters, not counting a silent final "e" ("there", "make"), at least one per word,
 * and one per digit, since digits are read as words.
 */
function syllablesOf(word: string): Syllable[] {
  const syllables: Syllable[] = [];
  const lower = word.normalize("NFKD").toLowerCase();
  const spelled = /[aeiouy][^aeiouy\d]+e$/u.test(lower) ? lower.slice(0, -1) : lower;
  for (const match of spelled.matchAll(/([^aeiouy\d]*)([aeiouy]+|\d)/gu)) {
    const vowel = /\d/.test(match[2] ?? "") ? "a" : (match[2] ?? "a").replace("y", "i").charAt(0);
    syllables.push({ formants: FORMANTS[vowel] ?? NEUTRAL_VOWEL, onset: (match[1] ?? "") !== "" });
  }
  return syllables.length > 0 ? syllables : [{ formants: NEUTRAL_VOWEL, onset: true }];
}

const PERIOD_TABLE_SIZE = 1024;
/** Pitches are rounded to the hertz, so a few dozen periods serve every syllable of both voices. */
const periods = new Map<string, Float32Array>();

/**
 * One period of a vowel: the harmonics of the pitch up to 4 kHz, each weighted by how close it lies to the two
 * formants (a resonance 90 Hz wide) and falling off with its number as a glottal source does; peak at most 1.
 */
function vowelPeriod(formants: readonly [number, number], exactPitch: number): Float32Array {
  const pitch = Math.round(exactPitch);
  const key = `${formants.join(",")}@${pitch}`;
  const cached = periods.get(key);
  if (cached) return cached;
  const gains: number[] = [];
  for (let k = 1; k * pitch < 4000; k++) {
    const resonance = formants.reduce((sum, formant, i) => sum + (i === 0 ? 1 : 0.5) / (1 + ((k * pitch - formant) / 90) ** 2), 0);
    gains.push(resonance / Math.sqrt(k));
  }
  const norm = gains.reduce((sum, gain) => sum + gain, 0) || 1;
  const table = new Float32Array(PERIOD_TABLE_SIZE);
  for (let i = 0; i < PERIOD_TABLE_SIZE; i++) {
    let value = 0;
    gains.forEach((gain, k) => {
      value += gain * Math.sin((2 * Math.PI * (k + 1) * i) / PERIOD_TABLE_SIZE);
    });
    table[i] = value / norm;
  }
  periods.set(key, table);
  return table;
}

/** A fixed-seed generator, so that the same text always renders to the same samples. */
function noiseSource(seed: number): () => number {
  let state = seed;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 0x80000000 - 1;
  };
}

/**
 * The fallback when eSpeak NG is not installed. It does not speak: each syllable becomes a short vowel-like tone (a
 * harmonic series at the speaker's pitch, shaped by the vowel's first two formants), preceded by a burst of noise
 * where a consonant would be, with silences between words and longer ones at punctuation. So recordings have the
 * rhythm of the conversation and a voice per side, and the word timings are exact because they are where the tones are.
 */
export class ToneTts implements TextToSpeech {
  readonly name = "vowel-tones";

  constructor(private readonly voice: ToneVoice) {}

  async synthesize(text: string): Promise<SpokenText & { words: WordTiming[] }> {
    const shape = VOICES[this.voice];
    const tokens = speechTokens(text);
    const plan = tokens.map((token) => syllablesOf(token.word));
    const syllableCount = plan.reduce((sum, syllables) => sum + syllables.length, 0);
    const syllableLength = Math.round(shape.syllableSeconds * SAMPLE_RATE);
    const pauseLength = (token: SpeechToken): number => Math.round(PAUSE_SECONDS[token.pauseAfter] * SAMPLE_RATE);
    const leadIn = Math.round(LEAD_IN_SECONDS * SAMPLE_RATE);
    const length = leadIn + syllableCount * syllableLength + tokens.reduce((sum, token) => sum + pauseLength(token), 0);
    const samples = new Int16Array(tokens.length === 0 ? 0 : length);
    const noise = noiseSource(text.length + 1);
    const words: WordTiming[] = [];
    let cursor = leadIn;
    let phase = 0;
    let spoken = 0;
    tokens.forEach((token, index) => {
      const start = cursor;
      for (const syllable of plan[index] ?? []) {
        const pitch = shape.pitch * (1 - 0.1 * (spoken / Math.max(1, syllableCount)));
        phase = this.renderSyllable(samples, cursor, shape, syllable, pitch, phase, noise);
        cursor += syllableLength;
        spoken++;
      }
      words.push({ word: token.word, start: start / SAMPLE_RATE, end: cursor / SAMPLE_RATE });
      cursor += pauseLength(token);
    });
    return { sampleRate: SAMPLE_RATE, samples, words };
  }

  /**
   * Writes one syllable at `offset` and returns the glottal phase (in cycles), kept continuous so that syllables do not
   * click. One period of the vowel is computed once into a table and read back at the pitch, which is what keeps this
   * cheap enough to run on the event loop.
   */
  private renderSyllable(
    samples: Int16Array,
    offset: number,
    shape: VoiceShape,
    syllable: Syllable,
    pitch: number,
    startPhase: number,
    noise: () => number,
  ): number {
    const length = Math.round(shape.syllableSeconds * SAMPLE_RATE);
    const onset = syllable.onset ? Math.round(ONSET_SECONDS * SAMPLE_RATE) : 0;
    const period = vowelPeriod(syllable.formants, pitch);
    let phase = startPhase;
    for (let i = 0; i < length && offset + i < samples.length; i++) {
      let value: number;
      if (i < onset) {
        value = 0.25 * noise() * Math.sin((Math.PI * i) / onset);
      } else {
        phase = (phase + pitch / SAMPLE_RATE) % 1;
        const position = (i - onset) / (length - onset);
        const envelope = Math.max(0, Math.min(1, position / 0.12, (1 - position) / 0.25));
        value = (period[Math.floor(phase * PERIOD_TABLE_SIZE)] ?? 0) * envelope;
      }
      samples[offset + i] = Math.round(Math.max(-1, Math.min(1, value)) * PEAK);
    }
    return phase;
  }
}
