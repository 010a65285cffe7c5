import { EspeakSynthesizer } from "./espeak-synthesizer.js";
import type { Speaker } from "./speakers.js";
import { ToneSynthesizer } from "./tone-synthesizer.js";

export interface WordTiming {
  word: string;
  start: number;
  end: number;
}

export interface SynthesizedSpeech {
  sampleRate: number;
  /** Mono 16-bit PCM. */
  samples: Int16Array;
  /** Word timings in seconds from the start of this clip: one per word of the text (see `speechTokens`), in order. */
  words: WordTiming[];
}

export interface SpeechSynthesizer {
  readonly name: string;
  synthesize(text: string, voice: Speaker): Promise<SynthesizedSpeech>;
  /** Releases what the synthesizer holds (eSpeak NG's worker thread); synthesizing again afterwards starts anew. */
  close?(): Promise<void>;
}

/**
 * eSpeak NG when its optional package is installed and runs here, else the built-in tone synthesizer. eSpeak NG is
 * GPL-3.0, so Parley never imports it statically: it is loaded, in a worker thread, only when present.
 */
export async function createSpeechSynthesizer(): Promise<SpeechSynthesizer> {
  return (await EspeakSynthesizer.start()) ?? new ToneSynthesizer();
}
