import { createHash, timingSafeEqual } from "node:crypto";
import type { Logger } from "pino";
import { validateRequest } from "twilio/lib/webhooks/webhooks.js";
import type { DisconnectionReason } from "../../../domain/calls/call-states.js";
import type { CallEvent, CarrierCall, CarrierPort, ProviderCall } from "../../../domain/calls/ports.js";
import { inboundSettingsOf } from "../../../domain/projects/project-config.js";
import { ForbiddenError } from "../../../domain/shared/errors.js";
import type { AudioTransport } from "../../speech/pipeline/transport.js";
import type { CallListener, TwilioMediaCall, TwilioMediaPort } from "./twilio-media-session.js";
import { connectStreamTwiml, mediaStreamUrl, rejectTwiml } from "./twilio-provider.js";
import type { CallAction } from "../../../domain/tools/ports.js";

export interface TwilioCallsDeps {
  carriers: CarrierPort;
  /** `PUBLIC_BASE_URL`: where Twilio opens an answered call's media stream. */
  publicBaseUrl: string | undefined;
  /** The token that authenticates a call's media stream, as the provider put it in the call's TwiML. */
  mediaToken(callId: string): string;
  speech: CallSpeech;
  log: Logger;
}

/** The speech pipeline, which carries a Twilio call's audio and records both sides of it. */
export interface CallSpeech {
  /**
   * Starts the call's pipeline on `transport`, with the agent `prepare` resolves; `failed` is told why the call cannot
   * go on when a stage fails later. Undefined, having told `failed`, when an engine the project needs is missing.
   */
  carry(
    callId: string,
    prepare: () => Promise<ProviderCall>,
    transport: AudioTransport,
    failed: (reason: DisconnectionReason) => void,
    onCallAction: (action: CallAction) => void,
  ): Promise<(CallListener & Greeter) | undefined>;
}

/** The pipeline's way to open a call with a fixed line of the agent's (an inbound call's greeting). */
interface Greeter {
  greet(text: string): void;
}

/** Twilio's call SIDs: `CA` and 32 hexadecimal digits. */
const callSidPattern = /^CA[0-9a-fA-F]{32}$/;

/** Twilio's final call statuses, as Parley's disconnection reasons. */
const dialFailures: Record<string, DisconnectionReason> = { "no-answer": "dial_no_answer", busy: "dial_busy", failed: "dial_failed" };

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

function sameToken(a: string, b: string): boolean {
  const left = createHash("sha256").update(a).digest();
  const right = createHash("sha256").update(b).digest();
  return timingSafeEqual(left, right);
}

/**
 * What Twilio sends Parley, checked and applied: the status callback of each call (verified with `X-Twilio-Signature`
 * by the `twilio` package's own validateRequest, against the URL Twilio was given) and the call's media stream
 * (authenticated by the token Parley put into its TwiML), whose audio the speech pipeline carries. A status delivered
 * again changes nothing.
 */
export class TwilioCalls {
  constructor(private readonly deps: TwilioCallsDeps) {}

  /**
   * A call to one of the projects' numbers (Twilio's voice webhook): the TwiML that answers it. The `To` number
   * says whose call it is, across organizations, and the request must be signed with the auth token of a project
   * that holds it (ForbiddenError otherwise), whose account it names; only then is the call answered, in that
   * project, with a `<Connect><Stream>` as for an outbound call. A number no project holds, or one whose project does
   * not answer calls, is rejected and nothing is recorded; a caller whose thread already has a call on the line
   * hears busy. A webhook delivered again for a call already answered gets the same TwiML.
   */
  async inbound(params: Record<string, string>, signature: string, url: string): Promise<string> {
    const base = this.deps.publicBaseUrl;
    if (!base) {
      this.deps.log.error("a Twilio call came in, but PUBLIC_BASE_URL is not set: Twilio could not reach its media stream");
      return rejectTwiml();
    }
    const lines = await this.deps.carriers.linesFor("twilio", params["To"] ?? "");
    if (lines.length === 0) return rejectTwiml();
    const signed = lines.filter(
      (line) => line.secrets.twilioAuthToken !== undefined && line.config.voice.twilio.account_sid === params["AccountSid"] && validateRequest(line.secrets.twilioAuthToken, signature, url, params),
    );
    const line = signed.find((candidate) => candidate.answers) ?? signed[0];
    if (!line) throw new ForbiddenError("Invalid signature");
    const callSid = params["CallSid"] ?? "";
    if (!callSidPattern.test(callSid)) return rejectTwiml();
    const known = await this.deps.carriers.callByVendorId("twilio", callSid);
    const connect = (callId: string) => connectStreamTwiml(mediaStreamUrl(base, callId), this.deps.mediaToken(callId));
    if (known) return known.organization_id === line.organizationId && known.status === "ongoing" ? connect(known.id) : rejectTwiml();
    const answer = await this.deps.carriers.answer(line, { fromNumber: params["From"] ?? "", toNumber: params["To"] ?? "", vendorCallId: callSid });
    if ("refused" in answer) return rejectTwiml(answer.refused === "busy");
    return connect(answer.call.id);
  }

  /** Applies a status callback; throws ForbiddenError for one that cannot be authenticated. */
  async status(callId: string, params: Record<string, string>, signature: string | undefined, url: string): Promise<void> {
    await this.applyStatus(await this.deps.carriers.call(callId), params, signature, url);
  }

  /**
   * Applies a status callback that names its call by `CallSid` only: the one a number's "call status changes" webhook
   * sends for the calls it answered.
   */
  async numberStatus(params: Record<string, string>, signature: string | undefined, url: string): Promise<void> {
    const callSid = params["CallSid"] ?? "";
    await this.applyStatus(callSidPattern.test(callSid) ? await this.deps.carriers.callByVendorId("twilio", callSid) : undefined, params, signature, url);
  }

  private async applyStatus(call: CarrierCall | undefined, params: Record<string, string>, signature: string | undefined, url: string): Promise<void> {
    if (!call || call.provider !== "twilio" || !signature) throw new ForbiddenError("Invalid signature");
    const { secrets } = await this.deps.carriers.version(call);
    if (!secrets.twilioAuthToken || !validateRequest(secrets.twilioAuthToken, signature, url, params)) throw new ForbiddenError("Invalid signature");
    const callSid = params["CallSid"] ?? "";
    if (call.provider_call_id !== null && call.provider_call_id !== callSid) throw new ForbiddenError("The callback names another call");
    const digest = createHash("sha256").update(`${url}\n${JSON.stringify(Object.entries(params).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))}`).digest("hex");
    if (callSid) await this.deps.carriers.bind(call.id, "twilio", callSid);
    await this.deps.carriers.apply(call, statusEvents(params, digest));
  }

  /** The port the media stream uses to authenticate itself and reach its call. */
  mediaPort(): TwilioMediaPort {
    return { begin: (callId, token, callSid) => this.beginMedia(callId, token, callSid) };
  }

  private async beginMedia(callId: string, token: string, callSid: string): Promise<TwilioMediaCall | undefined> {
    const call = await this.deps.carriers.call(callId);
    if (!call || call.provider !== "twilio" || call.call_type !== "phone_call" || !token || !sameToken(token, this.deps.mediaToken(callId))) return undefined;
    if (call.provider_call_id !== null && callSid !== "" && call.provider_call_id !== callSid) return undefined;
    // An outbound call connects when its callee's audio arrives; an inbound one was answered already, and is taken here.
    const inbound = call.direction === "inbound";
    if (!(await (inbound ? this.deps.carriers.carry(call.id) : this.deps.carriers.connect(call.id)))) return undefined;
    if (callSid) await this.deps.carriers.bind(call.id, "twilio", callSid);
    const { config } = await this.deps.carriers.version(call);
    const settings = inbound ? inboundSettingsOf(config) : undefined;
    const finish = (reason: DisconnectionReason) => {
      this.deps.carriers.end(call.id, reason).catch((error: unknown) => this.deps.log.warn({ err: error, callId: call.id }, "ending a Twilio call failed"));
    };
    // A transfer ends the media stream (Twilio moves the call to its <Dial>): that end is not the caller hanging up.
    let transferring = false;
    const act = async (action: CallAction) => {
      if (action.kind === "end_call") return finish("agent_hangup");
      transferring = true;
      try {
        await this.deps.carriers.transfer(call.id, action.number);
        finish("call_transfer");
      } catch (error) {
        this.deps.log.warn({ err: error, callId: call.id }, "transferring a Twilio call failed");
        finish("error_provider");
      }
    };
    return {
      callId: call.id,
      hungUp: async () => {
        // A stream ends once, by its stop or by its socket closing, whichever comes first; a transfer's end is not the caller's.
        if (!transferring) await this.deps.carriers.apply(call, [{ type: "ended", deliveryId: `twilio-media-ended:${call.id}`, reason: "user_hangup" }]);
      },
      attach: async (transport) => {
        const listener = await this.deps.speech.carry(call.id, () => this.deps.carriers.agentFor(call), transport, finish, (action) => void act(action));
        // The agent greets an inbound caller first (decisions.md, Inbound calls).
        if (listener && settings) listener.greet(settings.greeting);
        return listener;
      },
      log: this.deps.log,
    };
  }
}
