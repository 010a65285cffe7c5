import type { ProjectConfig, ProjectSecrets } from "../projects/project-config.js";
import type { CallAction } from "../tools/ports.js";
import type { DisconnectionReason } from "./call-states.js";
import type { CallRecord } from "./calls-repository.js";

/** Who speaks in a call (the history calls the agent's turns `assistant` messages; see speakers.ts). */
export type Speaker = "agent" | "user";

/** The speech vendors' keys of a project version (write-only settings), for a call's speech engines. */
export interface SpeechKeys {
  sttApiKey?: string;
  ttsApiKey?: string;
}

/** An utterance of a call's transcript (a vendor's, or one Parley recorded or rendered), words timed in seconds from the call's start. */
export interface TimedUtterance {
  role: Speaker;
  content: string;
  words: { word: string; start: number; end: number }[];
}

/**
 * Renders the recording of a call that carried no audio (text mode, the simulated callee, a vendor that records
 * nothing) from its stored utterances, each placed at the moment it was said (seconds from the call's start): the WAV
 * and the transcript with its words timed as rendered. The speech engines that voice it are the providers'.
 */
export interface RecordingRenderer {
  render(utterances: readonly { role: Speaker; content: string; startSeconds: number }[]): Promise<{ wav: Buffer; transcriptObject: TimedUtterance[] }>;
  /** Releases the voices (eSpeak NG's worker thread); rendering again afterwards starts them anew. */
  close(): Promise<void>;
}

export type UserSentiment = "Positive" | "Neutral" | "Negative" | "Unknown";
export type AnalysisValue = string | number | boolean | null;

/** The post-call analysis as Parley shows it, whether its model made it (call-analysis.ts) or a vendor's did. */
export interface CallAnalysis {
  call_summary: string;
  user_sentiment: UserSentiment;
  call_successful: boolean | null;
  custom_analysis_data: Record<string, AnalysisValue>;
}

/**
 * What a carrier reports of a call, in no vendor's words: each vendor turns its own wire format (Twilio's status
 * callbacks and media stream, Retell's webhooks) into these. `deliveryId` names the report, so that one delivered
 * again (a vendor's retry, a stream's stop followed by its socket closing) changes nothing.
 */
export type CallEvent =
  /** The call was answered; `startedAt` is the vendor's own start time, when it says. */
  | { type: "connected"; deliveryId: string; startedAt?: Date }
  /**
   * The vendor says the call is over. `endedAt` and `durationSeconds` are its own end time and length, when it
   * gives them.
   */
  | { type: "ended"; deliveryId: string; reason: DisconnectionReason; endedAt?: Date; durationSeconds?: number }
  /** The vendor's own transcript and recording of the call. */
  | { type: "transcript"; deliveryId: string; transcriptObject: TimedUtterance[]; recordingUrl: string | null }
  /** The vendor's post-call analysis. */
  | { type: "analysis"; deliveryId: string; analysis: CallAnalysis };

/**
 * A vendor's report about one of its calls, its signature verified with the key of the call's project: the call, the
 * vendor's id for it when the report names one, and what it says as call events.
 */
export interface CallReport {
  call: CarrierCall;
  vendorCallId: string | undefined;
  events: CallEvent[];
}

/** The recording and timed transcript of a call that this instance carried with real audio, taken as it ends. */
export interface CallMedia {
  transcriptObject: unknown;
  recordingKey: string;
  /** When the recording stops: the call's end, so that `duration_ms` is the recording's length. */
  endedAt: Date;
}

/** A call as carriers see it: enough to name it, check its credentials and tell its state. */
export type CarrierCall = Pick<
  CallRecord,
  | "id"
  | "organization_id"
  | "thread_id"
  | "project_id"
  | "config_version_id"
  | "call_type"
  | "direction"
  | "status"
  | "provider"
  | "provider_call_id"
  | "conversation_id"
  | "appointment_opening_id"
  | "verification_code_sealed"
>;

/**
 * A project that holds the number a vendor's caller dialed, with the credentials of its current version: the carrier
 * checks the vendor's request against them before anything is created (the number is looked up across
 * organizations, so only a request signed with the project's own key reaches it).
 */
export interface InboundLine {
  organizationId: string;
  projectId: string;
  /** The voice account whose phone numbers hold the dialed number. */
  accountId: string;
  config: ProjectConfig;
  secrets: ProjectSecrets;
  /** Whether the project answers calls (`voice.inbound.enabled`). */
  answers: boolean;
}

/** A caller a vendor brings to one of a project's numbers, in the vendor's words mapped to Parley's. */
export interface InboundCaller {
  /** The caller's number as the vendor gives it; the thread's alias once in E.164. */
  fromNumber: string;
  /** The project's number that was dialed. */
  toNumber: string;
  /** The vendor's id for the call (Twilio's CallSid, Retell's call_id). */
  vendorCallId: string;
  /** The vendor's own start time, when it says. */
  startedAt?: Date;
}

/**
 * A vendor's caller to one of the projects' numbers, its request verified with the key of a project that holds the
 * number: `line` is the project that answers the call, undefined when none of them does (nothing is then recorded).
 */
export interface VerifiedCaller {
  caller: InboundCaller;
  line: InboundLine | undefined;
}

/**
 * How Parley answered a vendor's caller: the call, or why none was made (`declined`: the project does not answer calls
 * or the caller's number is not a phone number; `busy`: the caller's thread already has a call on the line).
 */
export type InboundAnswer = { call: CarrierCall } | { refused: "declined" | "busy" };

/*
 * The ports of calls: what the domain asks of voice providers (VoiceProvider and its capabilities, the web-call
 * host), what it gives them (CallEventSink, VoiceAgent, CarrierPort), and the shapes that pass between.
 */

/**
 * What a voice provider can do, which the domain asks instead of comparing provider names: a new provider states
 * its own, and nothing in the domain changes.
 */
export interface VoiceCapabilities {
  /**
   * Who carries a call's live part: the vendor (no Parley instance owns the call, so none ends it when lost), or
   * Parley (the instance holding the call's audio owns it; see CallSupervisor).
   */
  carries: "vendor" | "parley";
  /**
   * Where a call's recording and transcript come from: the vendor's webhooks (`vendor`); Parley's speech pipeline,
   * recording the call's real audio as it ends (`live`: nothing may stand in for a real caller's voice); or, for
   * Parley's own simulation, also a recording synthesized from the history when none was taken live (`rendered`).
   */
  records: "vendor" | "live" | "rendered";
  /** Who hosts the provider's web calls: the vendor, or Parley's own call socket. */
  webCalls: "vendor" | "parley";
  /** Whether a call can be transferred to another line. */
  transfers: boolean;
  /** Whether the vendor reaches this server from outside (webhooks, media sockets), which needs PUBLIC_BASE_URL. */
  callsBack: boolean;
}

/** The capabilities of a provider by its name, as calls and project versions record it. */
export type CapabilitiesOf = (provider: string) => VoiceCapabilities;

/**
 * What a vendor's carrier (src/providers/voice/twilio, retell) may ask of the domain: find its calls, check their
 * credentials, and report what the vendor says as call events. Everything else about a call is the domain's.
 */
export interface CarrierPort {
  /** A call by Parley's id. */
  call(callId: string): Promise<CarrierCall | undefined>;
  /** A call by the vendor's id for it. */
  callByVendorId(provider: string, vendorCallId: string): Promise<CarrierCall | undefined>;
  /** Records the vendor's id for a call, once: a call already bound to another id keeps it. */
  bind(callId: string, provider: string, vendorCallId: string): Promise<void>;
  /** The configuration and credentials of the project version the call was created with. */
  version(call: CarrierCall): Promise<{ config: ProjectConfig; secrets: ProjectSecrets }>;
  /** Applies what the vendor reported, each event once by its delivery id. */
  apply(call: CarrierCall, events: readonly CallEvent[]): Promise<void>;
  /** Applies a verified report: records the vendor's id for the call (see `bind`), then applies its events. */
  report(report: CallReport): Promise<void>;
  /** Makes a queued call ongoing; false when it can no longer start. */
  connect(callId: string): Promise<boolean>;
  /** The projects that hold `number` on the vendor `provider`, for the carrier to authenticate a caller's request against. */
  linesFor(provider: string, number: string): Promise<InboundLine[]>;
  /**
   * Answers a caller on `line`, on the caller's thread (found by its alias or created with it), in a new
   * conversation: the call is `ongoing` at once. A call whose media comes to Parley later is carried by no instance
   * until `carry`.
   */
  answer(line: InboundLine, caller: InboundCaller): Promise<InboundAnswer>;
  /** An answered call's media reached this instance, which carries the call from now; false when it is over or carried already. */
  carry(callId: string): Promise<boolean>;
  /**
   * The live leg of a call that is ongoing already reached this instance (a vendor reconnected its socket here): this
   * instance holds the call's length limit from now, for the time left. False when the call is not ongoing.
   */
  rejoin(callId: string): Promise<boolean>;
  /** Parley ends the call for a reason of its own (its maximum length, a stage that failed). */
  end(callId: string, reason: DisconnectionReason): Promise<void>;
  /** The call's agent and configuration; `recorded` utterances of it are in the thread's history already. */
  agentFor(call: CarrierCall, recorded?: number): Promise<ProviderCall>;
  /** The call's utterances so far, in order. */
  history(call: CarrierCall): Promise<TranscriptItem[]>;
  /** Whether the agent's reply closes the conversation (a farewell): a vendor that can is told to hang up. */
  closesConversation(reply: string): boolean;
  /** Hands the live call to another number at its vendor (the agent's `transfer_call`). */
  transfer(callId: string, number: string): Promise<void>;
}

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

/** The agent side of one call, fed the transcript so far (as vendors' LLM WebSockets are). */
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

/** A call to one of the project's numbers, which the agent answers by speaking `greeting` first. */
export interface InboundCallRequest extends PhoneCallRequest {
  greeting: string;
}

/** Plays a simulated caller into a project's number (POST /voice/simulated/inbound): the call is answered already. */
export interface SimulatedCallerHost {
  playSimulatedCaller(request: InboundCallRequest): Promise<void>;
}

export interface VoiceProvider {
  readonly name: string;
  readonly capabilities: VoiceCapabilities;
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
