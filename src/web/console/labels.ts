import { html } from "htm/preact";

/**
 * What the interface's codes mean to a person. The screens show these words; the raw value stays in the tooltip
 * (title), so that what the API returns can still be read and searched for.
 */
const words: Record<string, Record<string, string>> = {
  call_type: { web_call: "Web call", phone_call: "Phone call" },
  direction: { inbound: "Inbound", outbound: "Outbound" },
  status: { queued: "Queued", scheduled: "Scheduled", ongoing: "Ongoing", ended: "Ended", error: "Failed" },
  thread_type: { NORMAL: "Conversation", SIMULATION: "Simulation" },
  role: { user: "User", assistant: "Agent", agent: "Agent", system: "System" },
  turn_source: { message: "First message", scripted: "Scripted", simulated: "Simulated user", agent: "Agent" },
  stop_reason: { max_turns: "Maximum turns reached", user_ended: "The user ended it", agent_ended: "The agent ended it" },
  tool_status: { ok: "Done", error: "Failed", timeout: "Timed out" },
  criterion: { task_completion: "Task completed", stays_on_topic: "Stays on topic", no_repetition: "No repetition" },
  disconnection_reason: {
    user_hangup: "Caller hung up",
    agent_hangup: "Agent hung up",
    max_duration_reached: "Maximum length reached",
    inactivity: "Silence on the line",
    manual_stopped: "Stopped by the API",
    cancelled: "Cancelled before it started",
    dial_no_answer: "No answer",
    dial_busy: "Line busy",
    dial_failed: "Could not be placed",
    error_user_not_joined: "Caller never joined",
    error_provider: "Voice provider failed",
    error_llm_websocket_runtime: "Agent's model failed",
    error_speech_unavailable: "Speech engine unavailable",
    error_instance_lost: "Server lost the call",
    voicemail_reached: "Voicemail reached",
    call_transfer: "Transferred",
    error_unknown: "Unknown error",
  },
};

export type LabelKind = keyof typeof words;

/** A code in words: known codes by name, others with their underscores as spaces, and null as "Unknown". */
export function labelOf(kind: LabelKind, value: string | null | undefined): string {
  if (value === null || value === undefined || value === "") return "Unknown";
  const known = words[kind]?.[value];
  if (known) return known;
  const spaced = value.replace(/_/g, " ").toLowerCase();
  return spaced.charAt(0).toUpperCase() + spaced.slice(1);
}

/** The label with the raw value as its tooltip. */
export function Label({ kind, value }: { kind: LabelKind; value: string | null | undefined }) {
  return html`<span class="label" title=${value === null || value === undefined ? "null" : value} data-raw=${value ?? "null"}>${labelOf(kind, value)}</span>`;
}

/** A status as a coloured pill, in words. */
export function StatusPill({ status, testId }: { status: string; testId?: string }) {
  return html`<span class=${`status ${status}`} title=${status} data-testid=${testId}>${labelOf("status", status)}</span>`;
}

/** Seconds as m:ss (h:mm:ss past an hour). */
export function clock(seconds: number): string {
  const whole = Math.max(0, Math.floor(seconds));
  const h = Math.floor(whole / 3600);
  const m = Math.floor((whole % 3600) / 60);
  const s = String(whole % 60).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${s}` : `${m}:${s}`;
}

/** A duration in words a person reads at a glance: "42 s", "3 min 5 s". */
export function duration(milliseconds: number): string {
  const seconds = Math.round(milliseconds / 1000);
  return seconds < 60 ? `${seconds} s` : `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

/** Billed voice minutes as the time they stand for ("42 s", "3 min 5 s"): the unit is minutes, a person reads time. */
export function voiceTime(minutes: number): string {
  return minutes > 0 && minutes * 60 < 0.5 ? "< 1 s" : duration(minutes * 60_000);
}

/** "5 min ago", "yesterday", or the date: how long since, for lists. */
export function sinceText(iso: string, now = Date.now()): string {
  const seconds = Math.round((now - Date.parse(iso)) / 1000);
  if (seconds < 60) return "just now";
  if (seconds < 3600) return `${Math.floor(seconds / 60)} min ago`;
  if (seconds < 86_400) return `${Math.floor(seconds / 3600)} h ago`;
  if (seconds < 2 * 86_400) return "yesterday";
  return new Date(iso).toLocaleDateString();
}

/** A value the interface has as null, in words, with the raw null in the tooltip. */
export function Unknown() {
  return html`<span class="label" title="null">Unknown</span>`;
}

/** A call's duration, or "Unknown" while the record has none (before the call has ended). */
export function CallDuration({ milliseconds }: { milliseconds: number | null }) {
  return milliseconds === null ? html`<${Unknown} />` : html`${duration(milliseconds)}`;
}

/** An ISO 8601 time as the reader's local date and time, or "Unknown" for null. */
export function When({ iso }: { iso: string | null }) {
  return iso === null ? html`<${Unknown} />` : html`<time datetime=${iso}>${new Date(iso).toLocaleString()}</time>`;
}
