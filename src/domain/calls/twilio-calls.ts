import { createHash, timingSafeEqual } from "node:crypto";
import type { Logger } from "pino";
import { validateRequest } from "twilio/lib/webhooks/webhooks.js";
import type { AudioTransport } from "../../providers/speech/pipeline/transport.js";
import type { CallListener, TwilioMediaCall, TwilioMediaPort } from "../../providers/voice/twilio/twilio-media-session.js";
import type { ProviderCall } from "../../providers/voice/types.js";
import type { Db } from "../shared/database.js";
import { ForbiddenError } from "../shared/errors.js";
import type { CallLifecycle } from "./call-lifecycle.js";
import type { CallService } from "./call-service.js";
import type { DisconnectionReason } from "./call-states.js";
import type { CallAction } from "../tools/ports.js";
import type { CallRecord, CallsRepository } from "./calls-repository.js";
import type { VendorCallsRepository } from "./vendor-calls-repository.js";

export interface TwilioCallsDeps {
  db: Db;
  calls: CallsRepository;
  vendor: VendorCallsRepository;
  lifecycle: CallLifecycle;
  service: CallService;
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
  ): Promise<CallListener | undefined>;
}

/** Twilio's final call statuses, as Parley's disconnection reasons. */
const dialFailures: Record<string, DisconnectionReason> = { "no-answer": "dial_no_answer", busy: "dial_busy", failed: "dial_failed" };

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

  /** Applies a status callback; throws ForbiddenError for one that cannot be authenticated. */
  async status(callId: string, params: Record<string, string>, signature: string | undefined, url: string): Promise<void> {
    const call = await this.deps.calls.findById(callId);
    if (!call || call.provider !== "twilio" || !signature) throw new ForbiddenError("Invalid signature");
    const { secrets } = await this.deps.service.resolveVersion(call);
    if (!secrets.twilioAuthToken || !validateRequest(secrets.twilioAuthToken, signature, url, params)) throw new ForbiddenError("Invalid signature");
    const callSid = params["CallSid"] ?? "";
    if (call.provider_call_id !== null && call.provider_call_id !== callSid) throw new ForbiddenError("The callback names another call");
    const digest = createHash("sha256").update(`${url}\n${JSON.stringify(Object.entries(params).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))}`).digest("hex");
    if (!(await this.deps.vendor.claimDelivery("twilio", digest, this.deps.db))) return;
    try {
      if (callSid) await this.deps.vendor.bind(call.id, "twilio", callSid);
      await this.apply(call, params["CallStatus"] ?? "");
    } catch (error) {
      await this.deps.vendor.releaseDelivery("twilio", digest, this.deps.db);
      throw error;
    }
  }

  /** The port the media stream uses to authenticate itself and reach its call. */
  mediaPort(): TwilioMediaPort {
    return { begin: (callId, token, callSid) => this.beginMedia(callId, token, callSid) };
  }

  private async apply(call: CallRecord, status: string): Promise<void> {
    const failure = dialFailures[status];
    if (failure) {
      await this.deps.lifecycle.finish(call.id, failure);
    } else if (status === "completed") {
      const current = await this.deps.calls.findById(call.id);
      // Answered but its media stream never reached Parley (an unreachable PUBLIC_BASE_URL, say): nobody talked.
      await this.deps.lifecycle.finish(call.id, current?.status === "queued" ? "error_provider" : "user_hangup");
    } else if (status === "canceled") {
      await this.deps.lifecycle.finish(call.id, "cancelled");
    }
  }

  private async beginMedia(callId: string, token: string, callSid: string): Promise<TwilioMediaCall | undefined> {
    const call = await this.deps.calls.findById(callId);
    if (!call || call.provider !== "twilio" || call.call_type !== "phone_call" || !token || !sameToken(token, this.deps.mediaToken(callId))) return undefined;
    if (call.provider_call_id !== null && callSid !== "" && call.provider_call_id !== callSid) return undefined;
    if (!(await this.deps.lifecycle.connected(call.id))) return undefined;
    if (callSid) await this.deps.vendor.bind(call.id, "twilio", callSid);
    const { config } = await this.deps.service.resolveVersion(call);
    const limit = setTimeout(() => {
      this.deps.lifecycle.finish(call.id, "max_duration_reached").catch((error: unknown) => this.deps.log.warn({ err: error, callId: call.id }, "ending a Twilio call at its maximum length failed"));
    }, config.voice.max_call_seconds * 1000);
    limit.unref();
    const finish = (reason: DisconnectionReason) => {
      this.deps.lifecycle.finish(call.id, reason).catch((error: unknown) => this.deps.log.warn({ err: error, callId: call.id }, "ending a Twilio call failed"));
    };
    // A transfer ends the media stream (Twilio moves the call to its <Dial>): that end is not the caller hanging up.
    let transferring = false;
    const act = async (action: CallAction) => {
      if (action.kind === "end_call") return finish("agent_hangup");
      transferring = true;
      try {
        await this.deps.service.transfer(call.id, action.number);
        finish("call_transfer");
      } catch (error) {
        this.deps.log.warn({ err: error, callId: call.id }, "transferring a Twilio call failed");
        finish("error_provider");
      }
    };
    return {
      callId: call.id,
      hungUp: async () => {
        if (!transferring) await this.deps.lifecycle.finish(call.id, "user_hangup");
      },
      attach: (transport) => this.deps.speech.carry(call.id, () => this.deps.service.agentFor(call), transport, finish, (action) => void act(action)),
      release: () => clearTimeout(limit),
      log: this.deps.log,
    };
  }
}
