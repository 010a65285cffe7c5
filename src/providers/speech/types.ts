import type { PcmAudio } from "./audio.js";

/** Speech-to-text: one finished turn of 16 kHz audio in, its words out ("" when nothing was recognized). */
export interface SpeechToText {
  readonly name: string;
  transcribe(samples: Int16Array, signal?: AbortSignal): Promise<string>;
}

/** Text-to-speech: a sentence in, its audio out, at whatever rate the engine speaks (the pipeline resamples). */
export interface TextToSpeech {
  readonly name: string;
  synthesize(text: string, signal?: AbortSignal): Promise<PcmAudio>;
}
