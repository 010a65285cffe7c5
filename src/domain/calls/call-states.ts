/**
 * The vocabulary of calls. Statuses move only forward:
 *
 *   scheduled → queued → ongoing → ended
 *               queued | ongoing → error
 *   scheduled | queued → ended   (cancelled)
 *
 * Every transition is one conditional UPDATE in the store (`WHERE status IN (...)`), so two actors racing on one
 * call (a DELETE and the call's own loop, two instances starting a scheduled call) can never move it backwards or
 * apply a transition's effects twice: only the actor whose UPDATE returned the row goes on.
 */
export const callStatuses = ["queued", "scheduled", "ongoing", "ended", "error"] as const;
export type CallStatus = (typeof callStatuses)[number];

export const callTypes = ["phone_call", "web_call"] as const;
export type CallType = (typeof callTypes)[number];

export const callDirections = ["inbound", "outbound"] as const;
export type CallDirection = (typeof callDirections)[number];

/**
 * Why a call ended: Retell's words where one fits, a few of Parley's own where none does.
 * An `ended` call has one of the first group; an `error` call one of the second.
 */
export const disconnectionReasons = {
  /** The callee (or web client) hung up; the simulated callee does so after its last line. */
  user_hangup: "ended",
  /** The agent ended the call. */
  agent_hangup: "ended",
  /** The call reached the project's `voice.max_call_seconds`. */
  max_duration_reached: "ended",
  /** Nobody spoke for too long. */
  inactivity: "ended",
  /** Ended through `DELETE /voice/{thread_id}/phone-call` while it was ongoing. */
  manual_stopped: "ended",
  /** A scheduled or queued call cancelled through the interface before it connected. */
  cancelled: "ended",
  /** The callee never answered. */
  dial_no_answer: "error",
  /** A web call whose client did not join within the join window (30 s by default). */
  error_user_not_joined: "error",
  /** The voice provider failed to place or carry the call. */
  error_provider: "error",
  /** The agent's model failed mid-call (Retell's word for a failing LLM connection). */
  error_llm_websocket_runtime: "error",
  /** A speech engine the call needs is not installed, or a speech vendor failed during the call. */
  error_speech_unavailable: "error",
  /** The instance that ran the call's live part stopped vouching for it (it crashed or was killed). */
  error_instance_lost: "error",
  /** The callee's line was busy (Twilio's `busy`, Retell's `dial_busy`). */
  dial_busy: "error",
  /** The call could not be placed (Twilio's `failed`, Retell's `dial_failed`). */
  dial_failed: "error",
  // The rest of Retell's vocabulary, passed through as Retell reports it (see docs/voice.md).
  call_transfer: "ended",
  voicemail_reached: "ended",
  ivr_reached: "ended",
  transfer_bridged: "ended",
  transfer_cancelled: "ended",
  call_take_over: "ended",
  concurrency_limit_reached: "error",
  no_concurrency_fallback: "error",
  no_valid_payment: "error",
  scam_detected: "error",
  invalid_destination: "error",
  telephony_provider_permission_denied: "error",
  telephony_provider_unavailable: "error",
  sip_routing_error: "error",
  marked_as_spam: "error",
  user_declined: "error",
  registered_call_timeout: "error",
  error_llm_websocket_open: "error",
  error_llm_websocket_lost_connection: "error",
  error_llm_websocket_corrupt_payload: "error",
  error_no_audio_received: "error",
  error_asr: "error",
  error_retell: "error",
  error_unknown: "error",
} as const satisfies Record<string, "ended" | "error">;

export type DisconnectionReason = keyof typeof disconnectionReasons;

export function isDisconnectionReason(value: string): value is DisconnectionReason {
  return Object.hasOwn(disconnectionReasons, value);
}

/** Reasons that only a call that never connected can end with: the line never opened. */
const neverConnected: ReadonlySet<DisconnectionReason> = new Set<DisconnectionReason>([
  "error_user_not_joined",
  "dial_no_answer",
  "dial_busy",
  "dial_failed",
  "concurrency_limit_reached",
  "no_concurrency_fallback",
  "no_valid_payment",
  "scam_detected",
  "invalid_destination",
  "telephony_provider_permission_denied",
  "telephony_provider_unavailable",
  "sip_routing_error",
  "marked_as_spam",
  "user_declined",
  "registered_call_timeout",
]);

export function finalStatusOf(reason: DisconnectionReason): "ended" | "error" {
  return disconnectionReasons[reason];
}

/** The statuses a call may end from for a reason: the transitions of the state machine above. */
export function endableStatusesFor(reason: DisconnectionReason): readonly CallStatus[] {
  if (reason === "cancelled") return ["scheduled", "queued"];
  if (neverConnected.has(reason)) return ["queued"];
  if (finalStatusOf(reason) === "error") return ["queued", "ongoing"];
  return ["ongoing"];
}
