import type { Logger } from "pino";
import type { DisconnectionReason } from "../../domain/calls/call-states.js";
import type { CallAction } from "../../domain/tools/ports.js";
import type { VoicePipeline } from "../speech/pipeline/voice-pipeline.js";
import { isSpeechUnavailable, type SpeechCalls } from "../speech/pipeline/speech-calls.js";
import type { AudioTransport, CallTransport } from "../speech/pipeline/transport.js";
import type { CallEventSink, ProviderCall, WebCallClient } from "../../domain/calls/ports.js";

/** A call whose live part runs in this process: what stops it, and the web client's socket once one joined. */
export interface Carried {
  controller: AbortController;
  client?: WebCallClient;
}

/** Resolves true after `ms`, or false as soon as `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * The calls this process carries itself (the simulated callee's, the web clients'), shared by the simulated provider
 * and the web-call transport: each call's abort controller and client, and how a failing stage ends a call.
 */
export class CarriedCalls {
  private readonly carried = new Map<string, Carried>();

  constructor(
    readonly sink: CallEventSink,
    readonly log: Logger,
  ) {}

  carry(callId: string): Carried {
    const carried: Carried = { controller: new AbortController() };
    this.carried.set(callId, carried);
    return carried;
  }

  get(callId: string): Carried | undefined {
    return this.carried.get(callId);
  }

  all(): [string, Carried][] {
    return [...this.carried];
  }

  release(callId: string, carried: Carried): void {
    carried.controller.abort();
    if (this.carried.get(callId) === carried) this.carried.delete(callId);
  }

  fail(callId: string, reason: DisconnectionReason, error: unknown): void {
    this.log.error({ err: error, callId }, "a simulated call failed");
    this.sink.ended(callId, reason).catch(() => undefined);
  }

  /**
   * Carries out what the agent asked of a call this process carries: `end_call` ends it as `agent_hangup`; a transfer
   * has no line to go to here, so the call ends as `call_transfer` (the simulated provider's way of handing it over).
   */
  act(callId: string, action: CallAction): void {
    const reason: DisconnectionReason = action.kind === "end_call" ? "agent_hangup" : "call_transfer";
    this.sink.ended(callId, reason).catch((error: unknown) => this.log.warn({ err: error, callId }, "ending a call the agent ended failed"));
  }

  /** The call's speech pipeline; a missing engine ends the call as `error_speech_unavailable`. */
  async startPipeline(request: ProviderCall, transport: AudioTransport, speech: SpeechCalls, carried: Carried, connectedAt: number): Promise<VoicePipeline | undefined> {
    try {
      return await speech.start(request, transport, this.stageFailed(request.callId, carried), connectedAt, (action) => this.act(request.callId, action));
    } catch (error) {
      if (!isSpeechUnavailable(error)) throw error;
      this.log.error({ callId: request.callId, detail: error.message }, "a call's speech engine is not available");
      carried.client?.send({ type: "error", detail: error.message });
      await this.sink.ended(request.callId, "error_speech_unavailable");
      return undefined;
    }
  }

  /** The call's pipeline in text mode: the same loop without its audio stages. */
  startTextPipeline(request: ProviderCall, transport: CallTransport, speech: SpeechCalls, carried: Carried): VoicePipeline {
    return speech.startText(request, transport, this.stageFailed(request.callId, carried), (action) => this.act(request.callId, action));
  }

  /** A stage of the call's pipeline failed: the call stops here, and ends for `reason`. */
  private stageFailed(callId: string, carried: Carried): (reason: DisconnectionReason) => void {
    return (reason) => {
      carried.controller.abort();
      this.sink.ended(callId, reason).catch((error: unknown) => this.log.warn({ err: error, callId }, "ending a call failed"));
    };
  }
}
