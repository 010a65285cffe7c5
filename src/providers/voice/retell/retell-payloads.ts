import { isDisconnectionReason, type DisconnectionReason } from "../../../domain/calls/call-states.js";
import type { AnalysisValue, CallAnalysis, TimedUtterance, UserSentiment } from "../../../domain/calls/ports.js";
import { isRecord } from "../vendor-http.js";

/**
 * Retell's payloads as Parley reads them: the call object of its webhooks (`{event, call}`) and of its REST answers,
 * parsed from `unknown` field by field so that a malformed or hostile body never reaches the store.
 */

export interface RetellCallObject {
  callId: string;
  /** The call id Parley put in `metadata` when it created the call. */
  parleyCallId: string | undefined;
  callStatus: string | undefined;
  /** `inbound` for a call to one of the account's numbers, `outbound` for one it placed. */
  direction: string | undefined;
  fromNumber: string | undefined;
  toNumber: string | undefined;
  /** The Retell agent that carries the call. */
  agentId: string | undefined;
  startedAt: Date | undefined;
  endedAt: Date | undefined;
  disconnectionReason: string | undefined;
  transcriptObject: TimedUtterance[] | undefined;
  recordingUrl: string | undefined;
  analysis: CallAnalysis | undefined;
}

export interface RetellWebhook {
  event: string;
  call: RetellCallObject;
}

const maxIdLength = 200;

function text(value: unknown, max = maxIdLength): string | undefined {
  return typeof value === "string" && value.length > 0 && value.length <= max ? value : undefined;
}

function instant(value: unknown): Date | undefined {
  return typeof value === "number" && Number.isFinite(value) && value > 0 && value < 1e14 ? new Date(value) : undefined;
}

function seconds(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? Math.round(value * 1000) / 1000 : undefined;
}

/** Retell's `transcript_object`: utterances with words timed in seconds from the call's start, as Parley shows them. */
export function mapTranscriptObject(value: unknown): TimedUtterance[] | undefined {
  if (!Array.isArray(value)) return undefined;
  const entries: TimedUtterance[] = [];
  for (const item of value) {
    if (!isRecord(item) || (item["role"] !== "agent" && item["role"] !== "user") || typeof item["content"] !== "string") continue;
    const words = Array.isArray(item["words"]) ? item["words"] : [];
    entries.push({
      role: item["role"],
      content: item["content"],
      words: words.flatMap((word) => {
        if (!isRecord(word) || typeof word["word"] !== "string") return [];
        const start = seconds(word["start"]);
        const end = seconds(word["end"]);
        return start === undefined || end === undefined ? [] : [{ word: word["word"].trim(), start, end: Math.max(start, end) }];
      }),
    });
  }
  return entries;
}

const sentiments: readonly UserSentiment[] = ["Positive", "Neutral", "Negative", "Unknown"];

function analysisValue(value: unknown): AnalysisValue | undefined {
  if (value === null || typeof value === "string" || typeof value === "boolean") return value;
  return typeof value === "number" && Number.isFinite(value) ? value : undefined;
}

/** Retell's `call_analysis`, in Parley's shape: the summary, sentiment, success and the custom fields it extracted. */
export function mapAnalysis(value: unknown): CallAnalysis | undefined {
  if (!isRecord(value)) return undefined;
  const custom: Record<string, AnalysisValue> = {};
  const data = value["custom_analysis_data"];
  if (isRecord(data)) {
    for (const [key, raw] of Object.entries(data)) {
      const mapped = analysisValue(raw);
      if (mapped !== undefined) custom[key] = mapped;
    }
  }
  return {
    call_summary: typeof value["call_summary"] === "string" ? value["call_summary"] : "",
    user_sentiment: sentiments.find((candidate) => candidate === value["user_sentiment"]) ?? "Unknown",
    call_successful: typeof value["call_successful"] === "boolean" ? value["call_successful"] : null,
    custom_analysis_data: custom,
  };
}

export function parseCallObject(value: unknown): RetellCallObject | undefined {
  if (!isRecord(value)) return undefined;
  const callId = text(value["call_id"]);
  if (!callId) return undefined;
  const metadata = value["metadata"];
  return {
    callId,
    parleyCallId: isRecord(metadata) ? text(metadata["parley_call_id"]) : undefined,
    callStatus: text(value["call_status"]),
    direction: text(value["direction"]),
    fromNumber: text(value["from_number"]),
    toNumber: text(value["to_number"]),
    agentId: text(value["agent_id"]),
    startedAt: instant(value["start_timestamp"]),
    endedAt: instant(value["end_timestamp"]),
    disconnectionReason: text(value["disconnection_reason"]),
    transcriptObject: mapTranscriptObject(value["transcript_object"]),
    recordingUrl: text(value["recording_url"], 4000),
    analysis: mapAnalysis(value["call_analysis"]),
  };
}

/** A webhook body, or undefined when it is not one (then nothing in it can be trusted or even looked up). */
export function parseWebhook(body: string): RetellWebhook | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (!isRecord(parsed) || typeof parsed["event"] !== "string") return undefined;
  const call = parseCallObject(parsed["call"]);
  return call ? { event: parsed["event"], call } : undefined;
}

/**
 * Why a Retell call ended, in Parley's vocabulary, which takes Retell's words as they are. A reason Retell adds
 * later, or none at all, becomes `error_unknown` for a call Retell reports as failed and `user_hangup` otherwise.
 */
export function disconnectionReasonOf(call: RetellCallObject): DisconnectionReason {
  const reason = call.disconnectionReason;
  if (reason !== undefined && isDisconnectionReason(reason)) return reason;
  return call.callStatus === "error" || call.callStatus === "not_connected" ? "error_unknown" : "user_hangup";
}
