import type { CallerVoice } from "../stt.js";

/** What the pipeline tells the far end besides audio: the live transcript and playback control. */
export type PipelineNotice =
  | { type: "transcript"; role: "user" | "agent"; text: string; final: boolean }
  | { type: "agent_speaking" };

/**
 * The far end of a call as the pipeline sees it, with or without audio: it is told the live transcript. A far end
 * without audio (`SPEECH_MODE=text`) gives the caller's turns as text (`VoicePipeline.textTurn`) and takes the agent's
 * from the notices: the deltas as they stream, then the turn's final transcript, which it may take time to deliver
 * (the pipeline waits for it before carrying out what the agent asked of the call).
 */
export interface CallTransport {
  notify(notice: PipelineNotice): void | Promise<void>;
}

/**
 * A far end that carries audio: caller audio comes in through `VoicePipeline.hear` (16 kHz frames), and the agent's
 * audio goes out through `play`, already paced in real time by the pipeline. A transport converts at its edge: the
 * web-call socket sends 16 kHz PCM as it is, a telephony stream resamples to 8 kHz μ-law.
 */
export interface AudioTransport extends CallTransport {
  /** Told as it happens; the playback is how the agent's turn is delivered, so nothing is waited for. */
  notify(notice: PipelineNotice): void;
  /** One frame of the agent's speech (16 kHz mono PCM), to be played now. */
  play(frame: Int16Array): void;
  /** Barge-in: drop whatever agent audio the far end still has buffered. */
  clear(): void;
  /**
   * The line the caller's audio comes through, when the transport knows it: `telephone` for 8 kHz μ-law (a phone
   * call), which the recognizer hears as narrowband from the first word on instead of telling it from the audio.
   */
  readonly callerChannel?: CallerVoice["channel"];
  /** Marks the end of an agent sentence in the outgoing audio (a Twilio `mark`); the pipeline keeps its own clock. */
  mark(name: string): void;
}
