import type { DisconnectionReason } from "../../../domain/calls/call-states.js";
import type { PhoneCallRequest, PlacedCall, ProviderCall, RemoteCall, VoiceCapabilities, VoiceProvider } from "../../../domain/calls/ports.js";
import { isRecord, VendorError, vendorRequest } from "../vendor-http.js";

export interface TwilioProviderOptions {
  /** `PUBLIC_BASE_URL`: where Twilio reaches this service (its media stream and status callbacks). */
  publicBaseUrl: () => string | undefined;
  /** The token that authenticates a call's media stream (a `<Parameter>` of its `<Stream>`). */
  mediaToken(callId: string): string;
  timeoutMs: number;
  /** Closes this instance's media streams of a call (the call ended here), or all of them (the server stops). */
  closeStreams(callId?: string): void;
}

/** The call progress events Twilio is asked to report to the status callback. */
const statusCallbackEvents = ["initiated", "ringing", "answered", "completed"] as const;

function xmlAttribute(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

/** The TwiML of an answered call: connect it to Parley's media WebSocket, authenticated by a token. */
export function connectStreamTwiml(streamUrl: string, token: string): string {
  return (
    `<?xml version="1.0" encoding="UTF-8"?><Response><Connect><Stream url="${xmlAttribute(streamUrl)}">` +
    `<Parameter name="token" value="${xmlAttribute(token)}"/></Stream></Connect></Response>`
  );
}

/** The address of a call's media stream, which Twilio is told to open (`<Stream url>`). */
export function mediaStreamUrl(publicBaseUrl: string, callId: string): string {
  return `${publicBaseUrl.replace(/^http/, "ws")}/voice/twilio/media/${encodeURIComponent(callId)}`;
}

/** The TwiML that refuses a call without answering it: the caller hears a busy tone when `busy`, else that nobody answers. */
export function rejectTwiml(busy = false): string {
  return `<?xml version="1.0" encoding="UTF-8"?><Response><Reject${busy ? ' reason="busy"' : ""}/></Response>`;
}

/** The TwiML that hands a live call to another number. */
export function dialTwiml(number: string): string {
  return `<?xml version="1.0" encoding="UTF-8"?><Response><Dial>${xmlAttribute(number)}</Dial></Response>`;
}

/**
 * Twilio carries the telephone line; Parley drives the audio itself over Twilio's bidirectional media stream (see
 * twilio-media-session.ts). Calls are created and ended through Twilio's REST API (form bodies, Basic auth with the
 * account SID and auth token); their progress comes from the signed status callback.
 */
export class TwilioVoiceProvider implements VoiceProvider {
  readonly name = "twilio";
  /** Twilio carries the line only: Parley's pipeline carries and records the audio, and hosts the project's web calls. */
  readonly capabilities: VoiceCapabilities = { carries: "parley", records: "live", webCalls: "parley", transfers: false, callsBack: true };

  constructor(private readonly options: TwilioProviderOptions) {}

  async createPhoneCall(request: PhoneCallRequest): Promise<PlacedCall> {
    const base = this.options.publicBaseUrl();
    if (!base) throw new VendorError("PUBLIC_BASE_URL is not set: Twilio could not reach this server");
    const form = new URLSearchParams({
      To: request.toNumber,
      From: request.fromNumber,
      Twiml: connectStreamTwiml(mediaStreamUrl(base, request.callId), this.options.mediaToken(request.callId)),
      StatusCallback: `${base}/voice/twilio/status/${encodeURIComponent(request.callId)}`,
      StatusCallbackMethod: "POST",
    });
    for (const event of statusCallbackEvents) form.append("StatusCallbackEvent", event);
    const answer = await this.post(request, `/Calls.json`, form);
    const sid = isRecord(answer) ? answer["sid"] : undefined;
    if (typeof sid !== "string" || !/^CA[0-9a-fA-F]{32}$/.test(sid)) throw new VendorError("Twilio's answer has no call sid");
    return { providerCallId: sid };
  }

  /** Twilio carries phone lines only: a Twilio project's web calls are Parley's own (see ProviderRouter). */
  async createWebCall(_request: ProviderCall): Promise<PlacedCall> {
    throw new VendorError("web calls of a Twilio project are hosted by Parley, not placed through Twilio");
  }

  /** `POST …/Calls/{CallSid}.json` with `Status=completed`; a call Twilio already ended is not an error here. */
  async hangUp(call: RemoteCall): Promise<void> {
    try {
      await this.post(call, `/Calls/${encodeURIComponent(call.providerCallId)}.json`, new URLSearchParams({ Status: "completed" }));
    } catch (error) {
      if (error instanceof VendorError && error.status === 404) return;
      throw error;
    }
  }

  /**
   * The agent's `transfer_call`: the live call is updated with new TwiML (`POST …/Calls/{CallSid}.json` with `Twiml`),
   * which ends its media stream and dials `number` in its place.
   */
  async transfer(call: RemoteCall, number: string): Promise<void> {
    await this.post(call, `/Calls/${encodeURIComponent(call.providerCallId)}.json`, new URLSearchParams({ Twiml: dialTwiml(number) }));
  }

  async endCall(callId: string, _reason: DisconnectionReason): Promise<void> {
    this.options.closeStreams(callId);
  }

  async close(): Promise<void> {
    this.options.closeStreams();
  }

  private post(call: { config: ProviderCall["config"]; secrets: ProviderCall["secrets"] }, path: string, form: URLSearchParams): Promise<unknown> {
    const { account_sid: accountSid, api_base_url: baseUrl } = call.config.voice.twilio;
    const token = call.secrets.twilioAuthToken;
    if (!accountSid || !token) throw new VendorError("the project has no Twilio account (voice.twilio.account_sid and auth_token)");
    return vendorRequest({
      vendor: "Twilio",
      method: "POST",
      url: `${baseUrl}/2010-04-01/Accounts/${encodeURIComponent(accountSid)}${path}`,
      headers: {
        authorization: `Basic ${Buffer.from(`${accountSid}:${token}`).toString("base64")}`,
        "content-type": "application/x-www-form-urlencoded",
        accept: "application/json",
      },
      body: form.toString(),
      timeoutMs: this.options.timeoutMs,
    });
  }
}
