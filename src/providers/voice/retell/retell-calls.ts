import type { Logger } from "pino";
import type { CarrierCall, CarrierPort } from "../../../domain/calls/ports.js";
import { inboundSettingsOf } from "../../../domain/projects/project-config.js";
import type { RetellLlmCall } from "./retell-llm-session.js";

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
 * Retell's Custom LLM socket, for the calls Parley created or answered, found by Retell's call id. Retell's webhooks
 * are retell-webhooks.ts's.
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
    // A socket Retell reconnects to this instance (the one that held it restarted or was lost) carries the call from here.
    if (call.status === "ongoing") await carriers.rejoin(callId);
    return {
      callId,
      agent,
      history,
      // The agent greets an inbound caller first; a socket Retell reconnects mid-call picks up instead.
      ...(inbound && history.length === 0 ? { greeting: inbound.greeting } : {}),
      // Connected here, or elsewhere meanwhile (Retell's `call_started` served by another instance): live here either way.
      connect: async () => (await carriers.connect(callId)) || (await carriers.rejoin(callId)),
      closesConversation: (reply) => carriers.closesConversation(reply),
      log: this.deps.log,
    };
  }
}
