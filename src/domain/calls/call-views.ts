import type { CallRecord, CallUtterance } from "./calls-repository.js";
import { cursorObject, invalidCursor } from "../shared/cursors.js";
import { speakerLabel, speakerOfRole } from "./speakers.js";

/** What the interface shows of calls, built from the stored record. */
export interface CallSummaryView {
  id: string;
  thread_id: string;
  call_type: string;
  status: string;
  created_at: string;
  conversation_id: number | null;
  direction: string | null;
  from_number: string | null;
  to_number: string | null;
  scheduled_for: string | null;
  start_timestamp: number | null;
  end_timestamp: number | null;
  duration_ms: number | null;
  disconnection_reason: string | null;
}

export interface CallDetailView extends CallSummaryView {
  transcript: string | null;
  transcript_object: unknown;
  recording_url: string | null;
  call_analysis: unknown;
}

export interface PhoneCallView {
  id: string;
  call_type: string;
  status: string;
  to_number: string | null;
  from_number: string | null;
  scheduled_for: string | null;
  start_timestamp: number | null;
  end_timestamp: number | null;
  duration_ms: number | null;
}

const unixSeconds = (date: Date | null): number | null => (date ? Math.floor(date.getTime() / 1000) : null);

export function callSummary(call: CallRecord): CallSummaryView {
  return {
    id: call.id,
    thread_id: call.thread_id,
    call_type: call.call_type,
    status: call.status,
    created_at: call.created_at.toISOString(),
    conversation_id: call.conversation_id,
    direction: call.direction,
    from_number: call.from_number,
    to_number: call.to_number,
    scheduled_for: call.scheduled_for?.toISOString() ?? null,
    start_timestamp: unixSeconds(call.started_at),
    end_timestamp: unixSeconds(call.ended_at),
    duration_ms: call.started_at && call.ended_at ? call.ended_at.getTime() - call.started_at.getTime() : null,
    disconnection_reason: call.disconnection_reason,
  };
}

export function phoneCallView(call: CallRecord): PhoneCallView {
  const summary = callSummary(call);
  return {
    id: summary.id,
    call_type: summary.call_type,
    status: summary.status,
    to_number: summary.to_number,
    from_number: summary.from_number,
    scheduled_for: summary.scheduled_for,
    start_timestamp: summary.start_timestamp,
    end_timestamp: summary.end_timestamp,
    duration_ms: summary.duration_ms,
  };
}

/** An answered inbound call, as POST /voice/simulated/inbound returns it. */
export interface InboundCallView {
  id: string;
  thread_id: string;
  call_type: string;
  direction: string | null;
  status: string;
  from_number: string | null;
  to_number: string | null;
}

export function inboundCallView(call: CallRecord): InboundCallView {
  return {
    id: call.id,
    thread_id: call.thread_id,
    call_type: call.call_type,
    direction: call.direction,
    status: call.status,
    from_number: call.from_number,
    to_number: call.to_number,
  };
}

/** `Agent: …` / `User: …` lines, from the utterances stored in the thread's history (so also while the call runs). */
export function plainTranscript(utterances: CallUtterance[]): string | null {
  if (utterances.length === 0) return null;
  return utterances.map((utterance) => `${speakerLabel(speakerOfRole(utterance.role))}: ${utterance.content}`).join("\n");
}

export function callDetail(call: CallRecord, utterances: CallUtterance[], recordingUrl: string | null): CallDetailView {
  return {
    ...callSummary(call),
    transcript: plainTranscript(utterances),
    transcript_object: call.transcript_object ?? null,
    recording_url: recordingUrl,
    call_analysis: call.call_analysis ?? null,
  };
}

/** The listing's keyset position: the last call's creation time (to the microsecond) and id. */
interface ListCursor {
  c: string;
  i: string;
}

export function encodeListCursor(call: CallRecord): string {
  const body: ListCursor = { c: call.created_key, i: call.id };
  return Buffer.from(JSON.stringify(body)).toString("base64url");
}

export function decodeListCursor(cursor: string): { createdKey: string; id: string } {
  const { c, i } = cursorObject(cursor) as Partial<ListCursor>;
  if (typeof c !== "string" || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/.test(c) || !isInstant(c)) throw invalidCursor(cursor);
  if (typeof i !== "string" || i.length > 200 || i.includes("\u0000")) throw invalidCursor(cursor);
  return { createdKey: c, id: i };
}

/** A real instant: PostgreSQL answers month 13, February 30 or year 0 with an error rather than an empty page. */
function isInstant(key: string): boolean {
  const millis = `${key.slice(0, 23)}Z`;
  const date = new Date(millis);
  return !Number.isNaN(date.getTime()) && date.getUTCFullYear() >= 1 && date.toISOString() === millis;
}
