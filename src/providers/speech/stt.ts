/** Speech-to-text: one finished turn of 16 kHz audio in, its words out ("" when nothing was recognized). */
export interface SpeechToText {
  readonly name: string;
  transcribe(samples: Int16Array, signal?: AbortSignal): Promise<string>;
}
