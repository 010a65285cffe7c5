export type SpeechEngineKind = "vad" | "stt" | "tts";

/**
 * A speech engine that cannot run here: an offline engine whose program or model is not installed, or a package
 * that does not load. A call that needs it ends as `error_speech_unavailable`; `/readyz` names it.
 */
export class SpeechUnavailableError extends Error {
  constructor(
    readonly kind: SpeechEngineKind,
    message: string,
  ) {
    super(message);
    this.name = "SpeechUnavailableError";
  }
}

/** A speech vendor answered with an error or not at all. `retryable` for 429 and 5xx, as the LLM adapters do. */
export class SpeechProviderError extends Error {
  constructor(
    message: string,
    readonly status: number | undefined,
    readonly retryable: boolean,
  ) {
    super(message);
    this.name = "SpeechProviderError";
  }
}
