/** What the pipeline tells the far end besides audio: the live transcript and playback control. */
export type PipelineNotice =
  | { type: "transcript"; role: "user" | "agent"; text: string; final: boolean }
  | { type: "agent_speaking" };

/**
 * The far end of a call as the speech pipeline sees it: caller audio comes in through `VoicePipeline.hear` (16 kHz
 * frames), and the agent's audio goes out through `play`, already paced in real time by the pipeline. A transport
 * converts at its edge: the web-call socket sends 16 kHz PCM as it is, a telephony stream resamples to 8 kHz μ-law.
 */
export interface AudioTransport {
  /** One frame of the agent's speech (16 kHz mono PCM), to be played now. */
  play(frame: Int16Array): void;
  /** Barge-in: drop whatever agent audio the far end still has buffered. */
  clear(): void;
  /** Marks the end of an agent sentence in the outgoing audio (a Twilio `mark`); the pipeline keeps its own clock. */
  mark(name: string): void;
  notify(notice: PipelineNotice): void;
}
