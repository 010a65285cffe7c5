import type { CallDirection, CallStatus, CallType, DisconnectionReason } from "./call-states.js";
import type { Queryable } from "../shared/database.js";

export interface CallRecord {
  id: string;
  organization_id: string;
  thread_id: string;
  project_id: string;
  config_version_id: string;
  call_type: CallType;
  direction: CallDirection | null;
  status: CallStatus;
  from_number: string | null;
  to_number: string | null;
  voice_provider_account_id: string | null;
  scheduled_for: Date | null;
  conversation_id: number | null;
  started_at: Date | null;
  ended_at: Date | null;
  disconnection_reason: DisconnectionReason | null;
  owner: string | null;
  access_token_hash: string | null;
  join_deadline: Date | null;
  transcript_object: unknown;
  recording_key: string | null;
  call_analysis: unknown;
  processed_at: Date | null;
  /** `simulated`, `twilio` or `retell`: the provider of the project version the call was created with. */
  provider: string;
  /** The vendor's id for the call (Twilio's CallSid, Retell's call_id), once the vendor has given it. */
  provider_call_id: string | null;
  /** A recording kept by the vendor, for calls whose recording is not Parley's own file. */
  vendor_recording_url: string | null;
  /** Why the call is ending, while the instance carrying its audio stores its record (see CallLifecycle.finish). */
  ending_reason: DisconnectionReason | null;
  ending_since: Date | null;
  /** The call's length as its vendor counts it (Twilio's CallDuration), which its voice usage follows. */
  vendor_duration_seconds: number | null;
  /** The seconds of voice usage charged for the call so far. */
  billed_seconds: number | null;
  /** The call's maximum length, from the configuration version it was created with (the inbound one for an inbound call). */
  max_call_seconds: number;
  /** The phone-call request's `appointment_opening_id`: a prompt variable of the call, and part of each tool request. */
  appointment_opening_id: string | null;
  /** The phone-call request's `verification_code`, sealed (SecretBox); never returned. */
  verification_code_sealed: string | null;
  created_at: Date;
  /** `created_at` to the microsecond, as the listing's keyset cursor needs it (a JS Date keeps milliseconds). */
  created_key: string;
}

export interface NewCall {
  id: string;
  organizationId: string;
  threadId: string;
  projectId: string;
  configVersionId: string;
  callType: CallType;
  direction: CallDirection | null;
  status: "queued" | "scheduled";
  fromNumber: string | null;
  toNumber: string | null;
  voiceProviderAccountId: string | null;
  scheduledFor: Date | null;
  owner: string | null;
  provider: string;
  maxCallSeconds: number;
  appointmentOpeningId: string | null;
  verificationCodeSealed: string | null;
}

export interface CallFilters {
  statuses?: string[];
  callTypes?: string[];
  directions?: string[];
  from?: Date;
  toInclusive?: Date;
  toExclusive?: Date;
  threadId?: string;
  projectName?: string;
  after?: { createdKey: string; id: string };
}

export interface CallUtterance {
  role: "user" | "assistant";
  content: string;
  created_at: Date;
}

/** Channel on which a finished call is announced as `<call id> <reason>`. */
export const callEndedChannel = "parley_call_ended";

/** Channel on which an end that waits for the call's record is announced as `<call id>`, for the instance carrying it. */
export const callEndingChannel = "parley_call_ending";

/** A vendor's own times for a call, which replace what Parley observed whenever they arrive. */
export interface VendorTimes {
  startedAt?: Date;
  endedAt?: Date;
  durationSeconds?: number;
}

/** Calls and their transitions. Every transition is conditional on the current status; see domain/call-states.ts. */
export interface CallsRepository {
  /** Inserts a call; undefined when the thread already has an active phone call (the partial unique index). */
  insert(call: NewCall, tx?: Queryable): Promise<CallRecord | undefined>;
  find(organizationId: string, id: string): Promise<CallRecord | undefined>;
  findById(id: string, tx?: Queryable): Promise<CallRecord | undefined>;
  /** The thread's phone call that still holds the line (queued, scheduled or ongoing), if any. */
  activePhoneCall(organizationId: string, threadId: string): Promise<CallRecord | undefined>;
  /** scheduled → queued: the one step that starts a scheduled call, so a duplicate delivery finds nothing to do. */
  promote(id: string, owner: string | null, tx?: Queryable): Promise<CallRecord | undefined>;
  /**
   * queued → ongoing, taken by the instance that will carry the call's live part; a call a vendor carries has no
   * owner here (null). `startedAt` is the vendor's own start time, when it reports one.
   */
  connect(id: string, owner: string | null, tx: Queryable, startedAt?: Date): Promise<CallRecord | undefined>;
  /**
   * queued → ongoing for an inbound call answered before its media reaches Parley: carried by no instance until one
   * takes it (`carry`), its heartbeat set once, so that a call whose media never comes is swept as lost when stale.
   */
  answer(id: string, tx: Queryable): Promise<CallRecord | undefined>;
  /**
   * The media of an answered call reached the instance `owner`, which carries the call from now; the call starts now,
   * so that it lasts as long as its recording. Undefined when the call is over or carried already.
   */
  carry(id: string, owner: string): Promise<CallRecord | undefined>;
  setConversation(id: string, conversationId: number, tx: Queryable): Promise<void>;
  /**
   * Notes that an ongoing call is to end, for the first reason given, and tells the instance carrying its audio (on
   * `callEndingChannel`, when the transaction commits); undefined when the call is not ongoing.
   */
  requestEnd(id: string, reason: DisconnectionReason, tx: Queryable): Promise<CallRecord | undefined>;
  /** Ongoing calls whose end has waited for their record longer than `seconds`. */
  overdueEnds(seconds: number): Promise<string[]>;
  /** Ongoing calls not yet ending that have run past their `max_call_seconds` by more than `graceSeconds`. */
  overLength(graceSeconds: number): Promise<string[]>;
  /**
   * Applies a vendor's times: its start and length to a call that has started, its end to one that is over.
   * Undefined when nothing changed.
   */
  applyVendorTimes(id: string, times: VendorTimes, tx: Queryable): Promise<CallRecord | undefined>;
  /** Records that the call's voice usage is `seconds`; returns the difference from what was charged before. */
  bill(id: string, seconds: number, tx: Queryable): Promise<number>;
  /**
   * Ends a call that is in one of `from`. A call whose instance was lost ends at its last heartbeat, the last moment
   * it was known to run; `staleSeconds` then also requires the heartbeat to still be that old, so that an owner that
   * was only slow keeps its call. `end` carries what the ending instance knows: a vendor's own end time, or, when this
   * instance carried the call's audio, its recording and timed transcript, written as it ends.
   */
  finish(
    id: string,
    from: readonly CallStatus[],
    status: "ended" | "error",
    reason: DisconnectionReason,
    tx: Queryable,
    staleSeconds?: number,
    end?: { endedAt?: Date; transcriptObject?: unknown; recordingKey?: string },
  ): Promise<CallRecord | undefined>;
  /**
   * Appends one utterance of an ongoing call to its thread's history, with its `message.created` event, in a single
   * statement: the call is share-locked (it cannot end meanwhile), both per-thread counters move in one row update,
   * and the NOTIFY goes out on commit. This is the reply path of every call, and on PGlite each statement blocks the
   * event loop, so it is one statement rather than the six of a transaction over MessagesRepository and EventsRepository,
   * whose numbering it follows. Undefined when the call is not ongoing: nothing is stored.
   */
  recordUtterance(callId: string, utterance: {
    id: string;
    role: "user" | "assistant";
    content: string;
    /** The message's extras besides the call's own (`call_id`, `source`): an agent's `tool_calls`. */
    extras: Record<string, unknown>;
  }, tx?: Queryable): Promise<{
    threadId: string;
    conversationId: number;
  } | undefined>;
  /** Ends the call's own conversation; a chat may have started a newer one meanwhile, which stays active. */
  endConversation(threadId: string, conversationId: number, tx: Queryable): Promise<void>;
  /** Tells every instance, when the transaction commits, that the call ended (the one carrying it hangs up). */
  announceEnded(id: string, reason: DisconnectionReason, tx: Queryable): Promise<void>;
  /** The live calls an instance carries. */
  carriedBy(owner: string): Promise<string[]>;
  /** Web calls: the join token's hash and deadline, while the call still waits for its client. */
  setJoinToken(id: string, tokenHash: string, deadline: Date): Promise<CallRecord | undefined>;
  /** One statement per instance and beat: every live call this instance runs is vouched for. */
  heartbeat(owner: string): Promise<void>;
  /** Live calls whose owner stopped beating, and queued web calls whose client missed the join deadline. */
  abandoned(staleSeconds: number): Promise<{
    stale: string[];
    notJoined: string[];
  }>;
  /** The post-call results, written once; a recording key already set (a vendor's stream stored it) is kept when none is given. */
  /** The analysis of a call whose recording and transcript were written as it ended; once. */
  saveAnalysis(id: string, analysis: unknown): Promise<CallRecord | undefined>;
  saveResults(id: string, results: {
    transcriptObject: unknown;
    recordingKey: string | null;
    analysis: unknown;
  }): Promise<CallRecord | undefined>;
  /** The call's utterances from the thread's history, in order. */
  utterances(threadId: string, callId: string, tx?: Queryable): Promise<CallUtterance[]>;
  /** A page of the organization's calls, newest first by (created_at, id). */
  list(organizationId: string, filters: CallFilters, limit: number): Promise<CallRecord[]>;
}
