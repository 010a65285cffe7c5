import type { DisconnectionReason } from "../../domain/calls/call-states.js";
import type { ProjectConfig, ProjectSecrets } from "../../domain/projects/project-config.js";
import type { CallAction } from "../../domain/tools/ports.js";
import type { Speaker } from "./speakers.js";
import type { SpeechKeys } from "../speech/engines.js";

/**
 * The one interface every voice provider implements. A provider places and carries calls; it reports what happens
 * through the `CallEventSink` the domain gives it, and it gets each of the agent's replies from the call's
 * `VoiceAgent`: the edge that a real vendor's WebSocket LLM connection would reach. Transcripts, recordings and
 * analysis are the domain's business, done after the call from what the agent recorded.
 */

export interface TranscriptItem {
  role: Speaker;
  content: string;
}

/** How a carrier takes part in one of the agent's turns, besides streaming its text. */
export interface VoiceTurnOptions {
  /** `false`: the caller records the reply itself, with `hear`, once it knows how much was spoken. */
  recordReply?: boolean;
  /** A tool started that has words to say while it runs (`speak_during_execution`): the carrier says them now. */
  onToolSpeech?(text: string): void;
  /**
   * The model asked to end or transfer the call (`end_call`, `transfer_call`): the carrier does so once the reply has
   * been played to the end.
   */
  onCallAction?(action: CallAction): void;
}

/** The agent side of one call, fed the transcript so far (as vendors' LLM WebSockets are). */
export interface VoiceAgent {
  /**
   * Records the transcript's utterances it has not seen yet and answers the last user turn, streaming the reply
   * through `onDelta`. Undefined when the call is no longer ongoing (or `signal` aborted): the provider hangs up.
   */
  respond(transcript: readonly TranscriptItem[], onDelta?: (text: string) => void, signal?: AbortSignal, options?: VoiceTurnOptions): Promise<string | undefined>;
  /** Records the transcript's new utterances without answering (a callee's closing words); false when the call is over. */
  hear(transcript: readonly TranscriptItem[]): Promise<boolean>;
}

/** How a provider reports a call's progress. Each method is safe to call late or twice: the domain's transitions are conditional. */
export interface CallEventSink {
  /**
   * The callee answered, or the web client joined (at `startedAt` when the vendor says when). False when the call
   * can no longer start: the provider drops it.
   */
  connected(callId: string, startedAt?: Date): Promise<boolean>;
  /** The call is over, for this reason. */
  ended(callId: string, reason: DisconnectionReason): Promise<void>;
  /** A web call is ready: its client joins with this token. */
  webCallReady(callId: string, accessToken: string): Promise<void>;
}

export interface ProviderCall {
  callId: string;
  /** The speech vendors' keys of the project version (write-only settings), for the call's speech engines. */
  speechKeys: SpeechKeys;
  /** The project configuration version the call was created with (voice settings, the agent's knowledge). */
  config: ProjectConfig;
  /** The version's credentials: a vendor's key or token. */
  secrets: ProjectSecrets;
  agent: VoiceAgent;
  /** The thread's JSON context, whose values the call's recognizer favours (names, places). */
  context: Record<string, unknown>;
}

/** What a provider knows of a call it placed: the vendor's id for it, when there is a vendor. */
export interface PlacedCall {
  providerCallId?: string;
  /** A web call's client token issued by the vendor, which `web_call.ready` delivers once the call is bound. */
  webCallAccessToken?: string;
}

/** A call as a vendor knows it, for ending it there. */
export interface RemoteCall {
  callId: string;
  providerCallId: string;
  config: ProjectConfig;
  secrets: ProjectSecrets;
}

export interface PhoneCallRequest extends ProviderCall {
  fromNumber: string;
  toNumber: string;
}

export interface VoiceProvider {
  readonly name: string;
  /** Starts dialing; progress arrives through the sink. */
  createPhoneCall(request: PhoneCallRequest): Promise<PlacedCall | void>;
  /** Prepares a web call; `webCallReady` follows with the client's access token. */
  createWebCall(request: ProviderCall): Promise<PlacedCall | void>;
  /** Ends, at the vendor, a call that Parley ended (DELETE, its maximum duration); from whichever instance ended it. */
  hangUp?(call: RemoteCall): Promise<void>;
  /** Hands a live phone call to another number at the vendor (the agent's `transfer_call`), for vendors Parley steers by REST. */
  transfer?(call: RemoteCall, number: string): Promise<void>;
  /** Hangs up a call this instance carries (a no-op for others); the domain has already recorded why. */
  endCall(callId: string, reason: DisconnectionReason): Promise<void>;
  /** Drops every call this instance carries, without reporting them (shutdown). */
  close(): Promise<void>;
}

/** Messages a web-call client sends, as JSON text frames (`user_message` is the older name of `text`). */
export type WebCallClientMessage = { type: "text"; text: string } | { type: "hangup" };

/** Messages the service sends to a web-call client, as JSON text frames. */
export type WebCallServerMessage =
  | { type: "call.started"; call_id: string }
  | { type: "agent_delta"; turn: number; text: string }
  | { type: "agent_message"; turn: number; text: string }
  | { type: "agent_audio"; turn: number; format: "wav"; data: string }
  | { type: "transcript"; role: "user" | "agent"; text: string; final: boolean }
  | { type: "agent_speaking" }
  | { type: "clear" }
  | { type: "end"; reason: DisconnectionReason }
  | { type: "call.ended"; reason: DisconnectionReason }
  | { type: "error"; detail: string };

export interface WebCallClient {
  send(message: WebCallServerMessage): void;
  /** A binary frame: the agent's speech as 16 kHz 16-bit little-endian mono PCM. */
  sendAudio(pcm: Buffer): void;
  close(code: number, reason: string): void;
}

export interface WebCallConnection {
  receive(message: WebCallClientMessage): void;
  /** The caller's microphone: 16 kHz mono PCM samples from a binary frame. */
  receiveAudio(samples: Int16Array): void;
  /** The client's socket closed. */
  disconnected(): void;
}

/** A provider that hosts web-call media itself (the simulated one): the client's socket is handed to it. */
export interface WebCallHost {
  join(request: ProviderCall, client: WebCallClient, options: { audio: boolean }): WebCallConnection;
}
