import type { Logger } from "pino";
import type { DisconnectionReason } from "../../../domain/calls/call-states.js";
import type { PhoneCallRequest, PlacedCall, ProviderCall, RemoteCall, VoiceCapabilities, VoiceProvider } from "../../../domain/calls/ports.js";
import { isRecord, VendorError, vendorRequest } from "../vendor-http.js";

export interface RetellProviderOptions {
  /** How long Retell's REST API may take to answer one request. */
  timeoutMs: number;
  log: Logger;
  /** Closes this instance's Custom LLM sockets of a call (the call ended here, or the server stops). */
  closeSockets(callId?: string): void;
}

/** What Parley places into a call's `metadata`, which Retell's webhooks carry back. */
export interface RetellMetadata {
  parley_call_id: string;
}

/**
 * Retell carries the call: telephony, speech recognition and synthesis, its transcript, recording and analysis.
 * Parley creates calls through Retell's REST API, answers Retell's Custom LLM WebSocket as the call's brain (see
 * retell-llm-session.ts), and takes the call's progress from Retell's signed webhooks. Nothing of the call lives in
 * a Parley process beyond that socket, which any instance may serve.
 */
export class RetellVoiceProvider implements VoiceProvider {
  readonly name = "retell";
  /** Retell carries the whole call: telephony, speech, its own transcript, recording and analysis, and web calls. */
  readonly capabilities: VoiceCapabilities = { carries: "vendor", records: "vendor", webCalls: "vendor", transfers: false, callsBack: true };

  constructor(private readonly options: RetellProviderOptions) {}

  async createPhoneCall(request: PhoneCallRequest): Promise<PlacedCall> {
    const answer = await this.post(request, "/v2/create-phone-call", {
      from_number: request.fromNumber,
      to_number: request.toNumber,
      override_agent_id: request.config.voice.retell.agent_id,
      metadata: { parley_call_id: request.callId } satisfies RetellMetadata,
    });
    return { providerCallId: callIdOf(answer) };
  }

  async createWebCall(request: ProviderCall): Promise<PlacedCall> {
    const answer = await this.post(request, "/v2/create-web-call", {
      agent_id: request.config.voice.retell.agent_id,
      metadata: { parley_call_id: request.callId } satisfies RetellMetadata,
    });
    const accessToken = isRecord(answer) && typeof answer["access_token"] === "string" && answer["access_token"] !== "" ? answer["access_token"] : undefined;
    if (!accessToken) throw new VendorError("Retell's create-web-call answer has no access_token");
    return { providerCallId: callIdOf(answer), webCallAccessToken: accessToken };
  }

  /** Retell names it stop-call: `POST /v2/stop-call/{call_id}`, 204. A call Retell already ended is not an error here. */
  async hangUp(call: RemoteCall): Promise<void> {
    try {
      await vendorRequest({
        vendor: "Retell",
        method: "POST",
        url: `${call.config.voice.retell.api_base_url}/v2/stop-call/${encodeURIComponent(call.providerCallId)}`,
        headers: this.headers(call.secrets.retellApiKey),
        timeoutMs: this.options.timeoutMs,
      });
    } catch (error) {
      if (error instanceof VendorError && (error.status === 404 || error.status === 400)) return;
      throw error;
    }
  }

  async endCall(callId: string, _reason: DisconnectionReason): Promise<void> {
    this.options.closeSockets(callId);
  }

  async close(): Promise<void> {
    this.options.closeSockets();
  }

  private post(request: ProviderCall, path: string, body: Record<string, unknown>): Promise<unknown> {
    return vendorRequest({
      vendor: "Retell",
      method: "POST",
      url: request.config.voice.retell.api_base_url + path,
      headers: { ...this.headers(request.secrets.retellApiKey), "content-type": "application/json" },
      body: JSON.stringify(body),
      timeoutMs: this.options.timeoutMs,
    });
  }

  private headers(apiKey: string | undefined): Record<string, string> {
    if (!apiKey) throw new VendorError("the project has no Retell API key (voice.retell.api_key)");
    return { authorization: `Bearer ${apiKey}`, accept: "application/json" };
  }
}

function callIdOf(answer: unknown): string {
  const callId = isRecord(answer) ? answer["call_id"] : undefined;
  if (typeof callId !== "string" || callId === "" || callId.length > 200) throw new VendorError("Retell's answer has no call_id");
  return callId;
}
