import { createHash } from "node:crypto";
import { endableStatusesFor } from "../../../domain/calls/call-states.js";
import type { CallEvent, CallReport, CarrierCall, CarrierPort, InboundLine, VerifiedCaller } from "../../../domain/calls/ports.js";
import { UnauthenticatedError } from "../../../domain/shared/errors.js";
import type { SignedWebhook } from "../vendor-http.js";
import { disconnectionReasonOf, parseWebhook, type RetellCallObject } from "./retell-payloads.js";
import { verifyRetellSignature } from "./retell-signature.js";

const invalidSignature = () => new UnauthenticatedError("Invalid signature");

/**
 * A webhook as call events. `call_ended` carries everything: Retell's start time (which also connects a call whose
 * `call_started` was lost or comes later, if it ended after talking), its transcript and recording, and its end.
 */
function webhookEvents(event: string, retell: RetellCallObject, digest: string): CallEvent[] {
  const connected: CallEvent[] = retell.startedAt ? [{ type: "connected", deliveryId: `${digest}:connected`, startedAt: retell.startedAt }] : [];
  if (event === "call_started") return connected;
  if (event === "call_ended") {
    const reason = disconnectionReasonOf(retell);
    return [
      ...(endableStatusesFor(reason).includes("ongoing") ? connected : []),
      { type: "transcript", deliveryId: `${digest}:transcript`, transcriptObject: retell.transcriptObject ?? [], recordingUrl: retell.recordingUrl ?? null },
      { type: "ended", deliveryId: `${digest}:ended`, reason, ...(retell.endedAt ? { endedAt: retell.endedAt } : {}) },
    ];
  }
  if (event === "call_analyzed") {
    return [
      ...(retell.transcriptObject ? [{ type: "transcript" as const, deliveryId: `${digest}:transcript`, transcriptObject: retell.transcriptObject, recordingUrl: retell.recordingUrl ?? null }] : []),
      ...(retell.analysis ? [{ type: "analysis" as const, deliveryId: `${digest}:analysis`, analysis: retell.analysis }] : []),
    ];
  }
  return [];
}

/**
 * Retell's signed webhooks (`call_started`, `call_ended`, `call_analyzed`), verified with retell-sdk's own `verify` on
 * the raw body and turned into what the domain applies. A webhook about a call Parley knows is verified with the API
 * key of the project version the call was created with, and becomes a report of call events (identified by a digest
 * of the body, so that one delivered again, a retry or a replay within the signature's window, changes nothing); an
 * inbound `call_started` for a call it does not know yet is verified with the keys of the projects that hold the
 * dialed number. Every refusal is UnauthenticatedError, thrown before anything is recorded.
 */
export class RetellWebhooks {
  constructor(private readonly deps: { carriers: CarrierPort }) {}

  async verify(webhook: SignedWebhook): Promise<CallReport | VerifiedCaller> {
    const hook = parseWebhook(webhook.rawBody);
    if (!hook) throw invalidSignature();
    const call = await this.callOf(hook.call);
    if (!call) {
      if (hook.event === "call_started" && hook.call.direction === "inbound") return this.caller(hook.call, webhook);
      throw invalidSignature();
    }
    const { secrets } = await this.deps.carriers.version(call);
    if (!secrets.retellApiKey || !(await verifyRetellSignature(webhook.rawBody, secrets.retellApiKey, webhook.signature))) throw invalidSignature();
    return { call, vendorCallId: hook.call.callId, events: webhookEvents(hook.event, hook.call, createHash("sha256").update(webhook.rawBody).digest("hex")) };
  }

  /**
   * A call to one of the projects' numbers, announced by `call_started`: the `to_number` says whose call it is, across
   * organizations, and the webhook must be signed with the API key of a project that holds it. The project that
   * answers it is one that answers calls with the agent Retell names; with none, nothing is recorded, and the call's
   * Custom LLM socket is refused.
   */
  private async caller(retell: RetellCallObject, webhook: SignedWebhook): Promise<VerifiedCaller> {
    const signed: InboundLine[] = [];
    for (const line of await this.deps.carriers.linesFor("retell", retell.toNumber ?? "")) {
      if (line.secrets.retellApiKey && (await verifyRetellSignature(webhook.rawBody, line.secrets.retellApiKey, webhook.signature))) signed.push(line);
    }
    if (signed.length === 0) throw invalidSignature();
    return {
      caller: {
        fromNumber: retell.fromNumber ?? "",
        toNumber: retell.toNumber ?? "",
        vendorCallId: retell.callId,
        ...(retell.startedAt ? { startedAt: retell.startedAt } : {}),
      },
      line: signed.find((candidate) => candidate.answers && (retell.agentId === undefined || candidate.config.voice.retell.agent_id === retell.agentId)),
    };
  }

  /** By Retell's call id; else by the Parley id placed in its metadata, for a webhook that outran create-phone-call's answer. */
  private async callOf(retell: RetellCallObject): Promise<CarrierCall | undefined> {
    const bound = await this.deps.carriers.callByVendorId("retell", retell.callId);
    if (bound) return bound;
    if (!retell.parleyCallId) return undefined;
    const call = await this.deps.carriers.call(retell.parleyCallId);
    return call && call.provider === "retell" && call.provider_call_id === null ? call : undefined;
  }
}
