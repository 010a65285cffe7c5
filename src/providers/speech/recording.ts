import type { RecordingRenderer, Speaker, TimedUtterance } from "../../domain/calls/ports.js";
import { encodeWav, resample } from "./audio.js";
import type { RecordingVoices } from "./recording-voices.js";
import type { WordTiming } from "./tts.js";
import { alignWords, speechTokens } from "./word-timing.js";

/** eSpeak NG's own rate, so that its clips go into the recording unchanged; other rates are resampled to it. */
export const RECORDING_SAMPLE_RATE = 22050;

export interface Utterance {
  role: Speaker;
  content: string;
  /** Seconds from call start when the speaker began. */
  startSeconds: number;
}

export interface RenderedRecording {
  /** Mono 16-bit PCM WAV at `RECORDING_SAMPLE_RATE`. */
  wav: Buffer;
  durationSeconds: number;
  /** Words in seconds from call start, rounded to the millisecond. */
  transcriptObject: TimedUtterance[];
}

/**
 * Synthesizes each utterance in turn, in its speaker's voice, and lays it into one track at its start time. A clip
 * that would overlap the one before (the synthesized voice took longer than the live speaker did) starts when that
 * one ends, and later clips keep their own times only when those are later still: the track never has two voices at
 * once and keeps its order. A voice that reports no word timings gets them from `alignWords`.
 */
export async function renderRecording(utterances: readonly Utterance[], voices: RecordingVoices): Promise<RenderedRecording> {
  const placed: { utterance: Utterance; offset: number; samples: Int16Array; words: WordTiming[] }[] = [];
  let cursor = 0;
  for (const utterance of utterances) {
    const speech = await voices[utterance.role].synthesize(utterance.content);
    const samples = resample(speech.samples, speech.sampleRate, RECORDING_SAMPLE_RATE);
    const offset = Math.max(cursor, Math.round(Math.max(0, utterance.startSeconds) * RECORDING_SAMPLE_RATE));
    placed.push({ utterance, offset, samples, words: speech.words ?? alignWords(speech, speechTokens(utterance.content)) });
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

/**
 * The domain's recording renderer: one set of voices for the instance, started at first use (eSpeak NG spins up a
 * worker thread); voices that failed to start are asked for again at the next recording.
 */
export class SynthesizedRecordingRenderer implements RecordingRenderer {
  private voices: Promise<RecordingVoices> | undefined;

  constructor(private readonly createVoices: () => Promise<RecordingVoices>) {}

  async render(utterances: readonly Utterance[]): Promise<RenderedRecording> {
    return renderRecording(utterances, await this.voicesOnce());
  }

  async close(): Promise<void> {
    const voices = await this.voices?.catch(() => undefined);
    await voices?.close();
  }

  private voicesOnce(): Promise<RecordingVoices> {
    this.voices ??= this.createVoices().catch((error: unknown) => {
      this.voices = undefined;
      throw error;
    });
    return this.voices;
  }
}
