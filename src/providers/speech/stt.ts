/** Speech-to-text: one finished turn of 16 kHz audio in, its words out ("" when nothing was recognized). */
export interface SpeechToText {
  readonly name: string;
  /** `phrases` are words to favour (names, products, places): stt.keywords and what Parley adds to them. */
  transcribe(samples: Int16Array, signal?: AbortSignal, phrases?: readonly string[]): Promise<string>;
}

/** One utterance being recognized while it is spoken. */
export interface RecognitionStream {
  /** Caller audio at 16 kHz, in order, as it arrives. */
  write(samples: Int16Array): void;
  /** The words heard so far (as of the last decoded chunk). */
  partial(): string;
  /** No more audio: the final words, once the last moments are decoded. */
  finish(): Promise<string>;
  /** The utterance is dropped (too short, or the call ended): nothing more is decoded. */
  cancel(): void;
}

/**
 * Live cepstral-mean normalization's state: `mean` normalizes the next utterance; at an utterance's end the mean
 * becomes `sum / frames` over the frames heard so far (the oldest decayed once there are more than 800).
 */
export interface CepstralState {
  mean: Float32Array;
  sum: Float32Array;
  frames: number;
}

/**
 * What a recognizer learns of one caller's voice over a call's turns, kept by the call (one caller, one voice) and
 * handed back at each turn; the recognizer reads and updates it. Empty at the call's start.
 */
export interface CallerVoice {
  /** pocketsphinx: the caller's cepstral-mean normalization (the voice's and the line's average spectrum). */
  cepstralState?: CepstralState;
  /** The caller's pitch over the turns heard: the sum of the natural logarithms of voiced frames' pitch in Hz, and their count. */
  pitch?: { logHzSum: number; frames: number };
  /** The line the caller's audio came through, when the transport knows it: `telephone` is 8 kHz μ-law (Twilio's). */
  channel?: "telephone";
  /** The caller's audio energy above 5 kHz and in all, over the turns heard: a caller with none above is narrowband. */
  band?: { upper: number; total: number };
}

/** A recognizer that decodes while the caller speaks, so that at the end of a turn only its last moments remain. */
export interface StreamingSpeechToText extends SpeechToText {
  stream(phrases?: readonly string[], caller?: CallerVoice): RecognitionStream;
}

export function isStreaming(stt: SpeechToText): stt is StreamingSpeechToText {
  return "stream" in stt && typeof stt.stream === "function";
}
