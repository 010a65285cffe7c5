import { createHash } from "node:crypto";
import type { Logger } from "pino";
import { endableStatusesFor } from "../../../domain/calls/call-states.js";
import type { CallEvent, CarrierCall, CarrierPort, InboundLine } from "../../../domain/calls/ports.js";
import { inboundSettingsOf } from "../../../domain/projects/project-config.js";
import { UnauthenticatedError } from "../../../domain/shared/errors.js";
import type { RetellLlmCall } from "./retell-llm-session.js";
import { disconnectionReasonOf, parseWebhook, type RetellCallObject } from "./retell-payloads.js";
import { verifyRetellSignature } from "./retell-signature.js";

export interface RetellCallsDeps {
  carriers: CarrierPort;
  log: Logger;
  /**
   * How long a Custom LLM socket for a call id not yet known waits for it: Retell may open the socket as soon as it
   * has created the call, a moment before its answer to create-phone-call has been recorded here.
   */
  socketGraceMs: number;
}

const live = (call: CarrierCall) => call.status === "queued" || call.status === "ongoing";

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
 * What Retell sends Parley, checked and applied: its Custom LLM socket (for calls Parley created, by Retell's call
 * id) and its signed webhooks (`call_started`, `call_ended`, `call_analyzed`). A webhook is verified with the API key
 * of the project version its call was created with, on the raw body, before anything in it is used; one delivered
 * again (a retry, a replay within the signature's window) is recognised by its digest and changes nothing.
 */
export class RetellCalls {
  constructor(private readonly deps: RetellCallsDeps) {}

  /** The call behind a Custom LLM socket, or undefined for a call id Parley did not create or that is over. */
  async llmCall(retellCallId: string): Promise<RetellLlmCall | undefined> {
    const deadline = Date.now() + this.deps.socketGraceMs;
    const { carriers } = this.deps;
    let call = await carriers.callByVendorId("retell", retellCallId);
    while (!call && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      call = await carriers.callByVendorId("retell", retellCallId);
    }
    if (!call || !live(call)) return undefined;
    const history = await carriers.history(call);
    const { agent, config } = await carriers.agentFor(call, history.length);
    const callId = call.id;
    const inbound = call.direction === "inbound" ? inboundSettingsOf(config) : undefined;
    return {
      callId,
      agent,
      history,
      // The agent greets an inbound caller first; a socket Retell reconnects mid-call picks up instead.
      ...(inbound && history.length === 0 ? { greeting: inbound.greeting } : {}),
      connect: async () => (await carriers.connect(callId)) || (await carriers.call(callId))?.status === "ongoing",
      closesConversation: (reply) => carriers.closesConversation(reply),
      log: this.deps.log,
    };
  }

  /** Applies a webhook; throws UnauthenticatedError for one that cannot be authenticated. */
  async webhook(rawBody: string, signature: string | undefined): Promise<void> {
    const hook = parseWebhook(rawBody);
    const call = hook ? await this.callOf(hook.call) : undefined;
    if (hook && !call && signature && hook.event === "call_started" && hook.call.direction === "inbound") return this.answer(hook.call, rawBody, signature);
    if (!hook || !call || !signature) throw new UnauthenticatedError("Invalid signature");
    const { secrets } = await this.deps.carriers.version(call);
    if (!secrets.retellApiKey || !(await verifyRetellSignature(rawBody, secrets.retellApiKey, signature))) throw new UnauthenticatedError("Invalid signature");
    await this.deps.carriers.bind(call.id, "retell", hook.call.callId);
    await this.deps.carriers.apply(call, webhookEvents(hook.event, hook.call, createHash("sha256").update(rawBody).digest("hex")));
  }

  /**
   * A call to one of the projects' numbers, announced by `call_started`: the `to_number` says whose call it is, across
   * organizations, and the webhook must be signed with the API key of a project that holds it (UnauthenticatedError
   * otherwise). The call is made in that project when it answers calls and its agent is the one Retell names;
   * otherwise nothing is recorded, and the call's Custom LLM socket is refused.
   */
  private async answer(retell: RetellCallObject, rawBody: string, signature: string): Promise<void> {
    const signed: InboundLine[] = [];
    for (const line of await this.deps.carriers.linesFor("retell", retell.toNumber ?? "")) {
      if (line.secrets.retellApiKey && (await verifyRetellSignature(rawBody, line.secrets.retellApiKey, signature))) signed.push(line);
    }
    if (signed.length === 0) throw new UnauthenticatedError("Invalid signature");
    const line = signed.find((candidate) => candidate.answers && (retell.agentId === undefined || candidate.config.voice.retell.agent_id === retell.agentId));
    if (!line) return;
    const answer = await this.deps.carriers.answer(line, {
      fromNumber: retell.fromNumber ?? "",
      toNumber: retell.toNumber ?? "",
      vendorCallId: retell.callId,
      ...(retell.startedAt ? { startedAt: retell.startedAt } : {}),
    });
    if ("refused" in answer) this.deps.log.info({ retellCallId: retell.callId, refused: answer.refused }, "an inbound Retell call was not answered");
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
