import { createHash } from "node:crypto";
import type { Logger } from "pino";
import { validateRequest } from "twilio/lib/webhooks/webhooks.js";
import type { DisconnectionReason } from "../../../domain/calls/call-states.js";
import type { CallEvent, CallReport, CarrierCall, CarrierPort, InboundCaller, InboundLine } from "../../../domain/calls/ports.js";
import { ForbiddenError } from "../../../domain/shared/errors.js";
import type { SignedWebhook } from "../vendor-http.js";
import { connectStreamTwiml, mediaStreamUrl, rejectTwiml } from "./twilio-provider.js";

export interface TwilioWebhooksDeps {
  carriers: CarrierPort;
  /** `PUBLIC_BASE_URL`: where Twilio opens an answered call's media stream. */
  publicBaseUrl: string | undefined;
  /** The token that authenticates a call's media stream, as the provider put it in the call's TwiML. */
  mediaToken(callId: string): string;
  log: Logger;
}

/**
 * A voice webhook once verified, and how it is to be answered: refused before anything is recorded (`reject`),
 * connected to the call it already made (`connect`: the webhook delivered again), or a new caller for `line`.
 */
export type TwilioRing = { kind: "reject" } | { kind: "connect"; callId: string } | { kind: "answer"; line: InboundLine; caller: InboundCaller };

/** Twilio's call SIDs: `CA` and 32 hexadecimal digits. */
const callSidPattern = /^CA[0-9a-fA-F]{32}$/;

/** Twilio's final call statuses, as Parley's disconnection reasons. */
const dialFailures: Record<string, DisconnectionReason> = { "no-answer": "dial_no_answer", busy: "dial_busy", failed: "dial_failed" };

const invalidSignature = () => new ForbiddenError("Invalid signature");

/** A webhook's form body; Twilio signs its fields, not its bytes. */
function formOf(webhook: SignedWebhook): Record<string, string> {
  return Object.fromEntries(new URLSearchParams(webhook.rawBody));
}

/**
 * A status callback as call events: Twilio's final statuses end the call, `completed` with Twilio's own length of it
 * (`CallDuration`, whole seconds); progress before that (`ringing`, `in-progress`) changes nothing, since a call
 * connects when its media stream reaches Parley.
 */
function statusEvents(params: Record<string, string>, deliveryId: string): CallEvent[] {
  const status = params["CallStatus"] ?? "";
  const failure = dialFailures[status];
  if (failure) return [{ type: "ended", deliveryId, reason: failure }];
  if (status === "canceled") return [{ type: "ended", deliveryId, reason: "cancelled" }];
  if (status !== "completed") return [];
  const duration = /^\d{1,9}$/.test(params["CallDuration"] ?? "") ? Number(params["CallDuration"]) : undefined;
  return [{ type: "ended", deliveryId, reason: "user_hangup", ...(duration !== undefined ? { durationSeconds: duration } : {}) }];
}

/**
 * Twilio's webhooks, verified with `X-Twilio-Signature` by the `twilio` package's own validateRequest (against the URL
 * Twilio was given) and turned into what the domain applies: a call's status callbacks as a report of call events
 * (identified by a digest of the whole callback, so that one delivered again changes nothing), a call to one of the
 * projects' numbers as the line that answers it. Every refusal is ForbiddenError, thrown before anything is recorded.
 */
export class TwilioWebhooks {
  constructor(private readonly deps: TwilioWebhooksDeps) {}

  /** A status callback of call `callId` (the URL Parley gave with the call), verified with the auth token of its project. */
  async status(callId: string, webhook: SignedWebhook): Promise<CallReport> {
    return this.report(await this.deps.carriers.call(callId), formOf(webhook), webhook);
  }

  /**
   * A status callback that names its call by `CallSid` only: the one a number's "call status changes" webhook sends
   * for the calls it answered.
   */
  async numberStatus(webhook: SignedWebhook): Promise<CallReport> {
    const params = formOf(webhook);
    const callSid = params["CallSid"] ?? "";
    return this.report(callSidPattern.test(callSid) ? await this.deps.carriers.callByVendorId("twilio", callSid) : undefined, params, webhook);
  }

  private async report(call: CarrierCall | undefined, params: Record<string, string>, webhook: SignedWebhook): Promise<CallReport> {
    if (!call || call.provider !== "twilio") throw invalidSignature();
    const { secrets } = await this.deps.carriers.version(call);
    if (!secrets.twilioAuthToken || !validateRequest(secrets.twilioAuthToken, webhook.signature, webhook.url, params)) throw invalidSignature();
    const callSid = params["CallSid"] ?? "";
    if (call.provider_call_id !== null && call.provider_call_id !== callSid) throw new ForbiddenError("The callback names another call");
    const fields = JSON.stringify(Object.entries(params).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    const digest = createHash("sha256").update(`${webhook.url}\n${fields}`).digest("hex");
    return { call, vendorCallId: callSid === "" ? undefined : callSid, events: statusEvents(params, digest) };
  }

  /**
   * A call to one of the projects' numbers (Twilio's voice webhook). The `To` number says whose call it is, across
   * organizations, and the request must be signed with the auth token of a project that holds it, whose account it
   * names; that project (one that answers calls, if several hold the number) answers it. A number no project holds
   * is rejected unverified, since no token could verify it; so is every call while PUBLIC_BASE_URL is unset. A webhook
   * delivered again for a call already answered connects to it again.
   */
  async inbound(webhook: SignedWebhook): Promise<TwilioRing> {
    if (!this.deps.publicBaseUrl) {
      this.deps.log.error("a Twilio call came in, but PUBLIC_BASE_URL is not set: Twilio could not reach its media stream");
      return { kind: "reject" };
    }
    const params = formOf(webhook);
    const lines = await this.deps.carriers.linesFor("twilio", params["To"] ?? "");
    if (lines.length === 0) return { kind: "reject" };
    const signed = lines.filter(
      (line) =>
        line.secrets.twilioAuthToken !== undefined &&
        line.config.voice.twilio.account_sid === params["AccountSid"] &&
        validateRequest(line.secrets.twilioAuthToken, webhook.signature, webhook.url, params),
    );
    const line = signed.find((candidate) => candidate.answers) ?? signed[0];
    if (!line) throw invalidSignature();
    const callSid = params["CallSid"] ?? "";
    if (!callSidPattern.test(callSid)) return { kind: "reject" };
    const known = await this.deps.carriers.callByVendorId("twilio", callSid);
    if (known) return known.organization_id === line.organizationId && known.status === "ongoing" ? { kind: "connect", callId: known.id } : { kind: "reject" };
    return { kind: "answer", line, caller: { fromNumber: params["From"] ?? "", toNumber: params["To"] ?? "", vendorCallId: callSid } };
  }

  /**
   * The TwiML that answers a verified voice webhook: a `<Connect><Stream>` as for an outbound call, or `<Reject/>` when
   * the project does not answer calls (or the caller's number is not one), with a busy tone when the caller's thread
   * already has a call on the line.
   */
  async answer(ring: TwilioRing): Promise<string> {
    const base = this.deps.publicBaseUrl;
    if (ring.kind === "reject" || !base) return rejectTwiml();
    const connect = (callId: string) => connectStreamTwiml(mediaStreamUrl(base, callId), this.deps.mediaToken(callId));
    if (ring.kind === "connect") return connect(ring.callId);
    const answer = await this.deps.carriers.answer(ring.line, ring.caller);
    return "refused" in answer ? rejectTwiml(answer.refused === "busy") : connect(answer.call.id);
  }
}
