import type { Speaker } from "./speakers.js";
import type { SpeechSynthesizer, WordTiming } from "./speech.js";
import { encodeWav } from "./wav.js";

/** eSpeak NG's own rate, so that its clips go into the recording unchanged; other rates are resampled to it. */
export const RECORDING_SAMPLE_RATE = 22050;

export interface Utterance {
  role: Speaker;
  content: string;
  /** Seconds from call start when the speaker began. */
  startSeconds: number;
}

export interface TranscriptEntry {
  role: Speaker;
  content: string;
  /** Seconds from call start, rounded to the millisecond. */
  words: WordTiming[];
}

export interface RenderedRecording {
  /** Mono 16-bit PCM WAV at `RECORDING_SAMPLE_RATE`. */
  wav: Buffer;
  durationSeconds: number;
  transcriptObject: TranscriptEntry[];
}

/** Linear interpolation: plenty for speech that is only listened back to, and it keeps the clip's duration exact. */
function resample(samples: Int16Array, from: number, to: number): Int16Array {
  if (from === to) return samples;
  const out = new Int16Array(Math.round((samples.length * to) / from));
  for (let i = 0; i < out.length; i++) {
    const position = (i * from) / to;
    const left = Math.floor(position);
    const a = samples[left] ?? 0;
    const b = samples[left + 1] ?? a;
    out[i] = Math.round(a + (b - a) * (position - left));
  }
  return out;
}

/**
 * Synthesizes each utterance in turn and lays it into one track at its start time. A clip that would overlap the one
 * before (the synthesized voice took longer than the live speaker did) starts when that one ends, and later clips
 * keep their own times only when those are later still: the track never has two voices at once and keeps its order.
 */
export async function renderRecording(utterances: Utterance[], synthesizer: SpeechSynthesizer): Promise<RenderedRecording> {
  const placed: { utterance: Utterance; offset: number; samples: Int16Array; words: WordTiming[] }[] = [];
  let cursor = 0;
  for (const utterance of utterances) {
    const speech = await synthesizer.synthesize(utterance.content, utterance.role);
    const samples = resample(speech.samples, speech.sampleRate, RECORDING_SAMPLE_RATE);
    const offset = Math.max(cursor, Math.round(Math.max(0, utterance.startSeconds) * RECORDING_SAMPLE_RATE));
    placed.push({ utterance, offset, samples, words: speech.words });
    cursor = offset + samples.length;
  }

  const track = new Int16Array(cursor);
  for (const clip of placed) track.set(clip.samples, clip.offset);
  const durationSeconds = cursor / RECORDING_SAMPLE_RATE;
  // Rounding up to the millisecond could put the last word a fraction past the end of the file.
  const lastMillisecond = Math.floor(durationSeconds * 1000) / 1000;
  const at = (clipOffset: number, seconds: number): number =>
    Math.min(lastMillisecond, Math.round((clipOffset / RECORDING_SAMPLE_RATE + seconds) * 1000) / 1000);

  return {
    wav: encodeWav({ sampleRate: RECORDING_SAMPLE_RATE, samples: track }),
    durationSeconds,
    transcriptObject: placed.map((clip) => ({
      role: clip.utterance.role,
      content: clip.utterance.content,
      words: clip.words.map((word) => ({ word: word.word, start: at(clip.offset, word.start), end: at(clip.offset, word.end) })),
    })),
  };
}
