/**
 * A live call's audio as the speech pipeline sees it, whatever carries the call: 16-bit PCM frames from the caller,
 * the agent's speech back, `clear` to stop what is still queued (barge-in) and notice of what was really played.
 * Twilio's media stream is one such transport (twilio-media-session.ts).
 */
export interface CallAudioTransport {
  /** Samples per second of both directions. */
  readonly sampleRate: number;
  /** The caller's audio, as it arrives. */
  onAudio(listener: (samples: Int16Array) => void): void;
  /** Queues the agent's speech; resolves true once it was played to the caller, false if it was cleared or the call ended first. */
  play(samples: Int16Array): Promise<boolean>;
  /** Drops whatever is queued and not yet played (the caller barged in). */
  clear(): void;
  /** The call's audio ended (hang-up, or the stream stopped). */
  onEnd(listener: () => void): void;
}
