import { createHash, timingSafeEqual } from "node:crypto";
import type { Logger } from "pino";
import type { DisconnectionReason } from "../../../domain/calls/call-states.js";
import type { CarrierPort, ProviderCall } from "../../../domain/calls/ports.js";
import { inboundSettingsOf } from "../../../domain/projects/project-config.js";
import type { AudioTransport } from "../../speech/pipeline/transport.js";
import type { CallListener, TwilioMediaCall, TwilioMediaPort } from "./twilio-media-session.js";
import type { CallAction } from "../../../domain/tools/ports.js";

export interface TwilioCallsDeps {
  carriers: CarrierPort;
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

function sameToken(a: string, b: string): boolean {
  const left = createHash("sha256").update(a).digest();
  const right = createHash("sha256").update(b).digest();
  return timingSafeEqual(left, right);
}

/**
 * A Twilio call's media stream, authenticated by the token Parley put into its TwiML, whose audio the speech pipeline
 * carries. Twilio's webhooks (status callbacks, the voice webhook) are twilio-webhooks.ts's.
 */
export class TwilioCalls {
  constructor(private readonly deps: TwilioCallsDeps) {}

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
