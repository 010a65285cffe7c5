import type { PcmAudio } from "./audio.js";

/** Where a word lies in a clip, in seconds from its start. */
export interface WordTiming {
  word: string;
  start: number;
  end: number;
}

/**
 * A synthesized text: its audio, and, from an engine that knows them, the word timings (one per word of the text as
 * `speechTokens` splits it, in order). Engines that report none leave `words` out; `alignWords` estimates them.
 */
export interface SpokenText extends PcmAudio {
  words?: WordTiming[];
}

/** Text-to-speech: a sentence in, its audio out, at whatever rate the engine speaks (the pipeline resamples). */
export interface TextToSpeech {
  readonly name: string;
  synthesize(text: string, signal?: AbortSignal): Promise<SpokenText>;
  /** Releases what the engine holds (eSpeak NG's worker threads); synthesizing again afterwards starts anew. */
  close?(): Promise<void>;
}
