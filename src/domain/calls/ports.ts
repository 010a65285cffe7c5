import type { ProviderCall, TranscriptItem } from "../../providers/voice/types.js";
import type { ProjectConfig, ProjectSecrets } from "../projects/project-config.js";
import type { CallEvent } from "./call-events.js";
import type { DisconnectionReason } from "./call-states.js";
import type { CallRecord } from "./calls-repository.js";

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
  call(callId: string): Promise<CallRecord | undefined>;
  /** A call by the vendor's id for it. */
  callByVendorId(provider: string, vendorCallId: string): Promise<CallRecord | undefined>;
  /** Records the vendor's id for a call, once: a call already bound to another id keeps it. */
  bind(callId: string, provider: string, vendorCallId: string): Promise<void>;
  /** The configuration and credentials of the project version the call was created with. */
  version(call: CallRecord): Promise<{ config: ProjectConfig; secrets: ProjectSecrets }>;
  /** Applies what the vendor reported, each event once by its delivery id. */
  apply(call: CallRecord, events: readonly CallEvent[]): Promise<void>;
  /** Makes a queued call ongoing; false when it can no longer start. */
  connect(callId: string): Promise<boolean>;
  /** Parley ends the call for a reason of its own (its maximum length, a stage that failed). */
  end(callId: string, reason: DisconnectionReason): Promise<void>;
  /** The call's agent and configuration; `recorded` utterances of it are in the thread's history already. */
  agentFor(call: CallRecord, recorded?: number): Promise<ProviderCall>;
  /** The call's utterances so far, in order. */
  history(call: CallRecord): Promise<TranscriptItem[]>;
  /** Whether the agent's reply closes the conversation (a farewell): a vendor that can is told to hang up. */
  closesConversation(reply: string): boolean;
}
