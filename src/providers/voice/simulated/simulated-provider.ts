import { randomBytes } from "node:crypto";
import type { Logger } from "pino";
import type { DisconnectionReason } from "../../../domain/calls/call-states.js";
import type {
  CallEventSink,
  InboundCallRequest,
  PhoneCallRequest,
  ProviderCall,
  SimulatedCallerHost,
  VoiceCapabilities,
  VoiceProvider,
  WebCallClient,
  WebCallConnection,
  WebCallHost,
} from "../../../domain/calls/ports.js";
import type { SpeechCalls } from "../../speech/pipeline/speech-calls.js";
import type { VoicePipeline } from "../../speech/pipeline/voice-pipeline.js";
import type { TextToSpeech } from "../../speech/tts.js";
import { type Carried, CarriedCalls, sleep } from "../carried-calls.js";
import { WebCallTransport } from "../web/web-call-transport.js";
import { SimulatedCallee } from "./simulated-callee.js";
import { SimulatedTextCallee } from "./simulated-text-callee.js";
import { simulatedCallerLines } from "./simulated-caller.js";

export interface SimulatedProviderOptions {
  /** The agent's reply as a WAV clip, for web clients that asked for audio (text-only mode). */
  speak(text: string): Promise<Buffer>;
  log: Logger;
  /** Every call's pipeline. */
  speech: SpeechCalls;
  /**
   * Real audio: the simulated callee speaks with `calleeVoice`. Without it (the fast text-only mode,
   * `SPEECH_MODE=text`) pipelines run without their audio stages, and lines and replies are exchanged as text.
   */
  audio?: { calleeVoice(): TextToSpeech };
}

/**
 * The embedded voice provider: no network, no telephony. A phone call rings for `ring_ms`, then the simulated callee
 * says its lines, each `turn_ms` after the agent has answered the one before, and hangs up after its last line. A
 * web call is ready after `ring_ms`; its client joins through the web-call transport. Calls live in this process,
 * which is why the domain records which instance carries each one (see CallSupervisor, which also ends a call at its
 * maximum length).
 */
export class SimulatedVoiceProvider implements VoiceProvider, WebCallHost, SimulatedCallerHost {
  readonly name = "simulated";
  /** Everything happens in the instance carrying the call; a call run as text gets a recording synthesized afterwards. */
  readonly capabilities: VoiceCapabilities = { carries: "parley", records: "rendered", webCalls: "parley", transfers: false, callsBack: false };
  private readonly calls: CarriedCalls;
  private readonly web: WebCallTransport;

  constructor(
    private readonly sink: CallEventSink,
    private readonly options: SimulatedProviderOptions,
  ) {
    this.calls = new CarriedCalls(sink, options.log);
    this.web = new WebCallTransport(this.calls, { speak: options.speak, speech: options.speech, mode: options.audio ? "audio" : "text" });
  }

  async createPhoneCall(request: PhoneCallRequest): Promise<void> {
    const carried = this.calls.carry(request.callId);
    const audio = this.options.audio;
    void (audio ? this.runAudioPhoneCall(request, carried, audio) : this.runTextPhoneCall(request, carried))
      .catch((error: unknown) => this.calls.fail(request.callId, "error_provider", error))
      .finally(() => this.calls.release(request.callId, carried));
  }

  /** The call is answered already: the agent greets, then the simulated caller says its lines and hangs up. */
  async playSimulatedCaller(request: InboundCallRequest): Promise<void> {
    const carried = this.calls.carry(request.callId);
    const audio = this.options.audio;
    void (audio ? this.runAudioInboundCall(request, carried, audio) : this.runTextInboundCall(request, carried))
      .catch((error: unknown) => this.calls.fail(request.callId, "error_provider", error))
      .finally(() => this.calls.release(request.callId, carried));
  }

  async createWebCall(request: ProviderCall): Promise<void> {
    const carried = this.calls.carry(request.callId);
    void (async () => {
      if (await sleep(request.config.voice.simulated.ring_ms, carried.controller.signal)) {
        await this.sink.webCallReady(request.callId, randomBytes(24).toString("base64url"));
      }
    })()
      .catch((error: unknown) => this.calls.fail(request.callId, "error_provider", error))
      // Until its client joins, nobody carries a web call: the join may reach any instance.
      .finally(() => this.calls.release(request.callId, carried));
  }

  join(request: ProviderCall, client: WebCallClient, options: { audio: boolean }): WebCallConnection {
    return this.web.join(request, client, options);
  }

  async endCall(callId: string, reason: DisconnectionReason): Promise<void> {
    await this.options.speech.drop(callId);
    const carried = this.calls.get(callId);
    if (!carried) return;
    this.calls.release(callId, carried);
    carried.client?.send({ type: "call.ended", reason });
    carried.client?.send({ type: "end", reason });
    carried.client?.close(1000, "call ended");
  }

  async close(): Promise<void> {
    for (const [callId, carried] of this.calls.all()) {
      this.calls.release(callId, carried);
      await this.options.speech.drop(callId);
      carried.client?.close(1001, "server shutting down");
    }
  }

  /**
   * A phone call with real audio: the simulated callee speaks, the pipeline hears it and speaks the agent's answers.
   * The phone rings for `ring_ms` and until the callee's lines are made, so that the call holds only its audio.
   */
  private async runAudioPhoneCall(request: PhoneCallRequest, carried: Carried, audio: NonNullable<SimulatedProviderOptions["audio"]>): Promise<void> {
    const { signal } = carried.controller;
    const { ring_ms: ringMs, turn_ms: turnMs } = request.config.voice.simulated;
    let pipeline: VoicePipeline | undefined;
    const callee = new SimulatedCallee({
      lines: simulatedCallerLines(request.config),
      tts: audio.calleeVoice(),
      turnMs,
      hear: (frame) => pipeline?.hear(frame),
      signal,
    });
    const [rang, ready] = await Promise.all([sleep(ringMs, signal), callee.prepare()]);
    if (!rang || !ready || !(await this.sink.connected(request.callId))) return;
    pipeline = await this.calls.startPipeline(request, callee, this.options.speech, carried, Date.now());
    if (pipeline && (await callee.run())) await this.sink.ended(request.callId, "user_hangup");
  }

  /**
   * An inbound call with real audio: the caller's lines are made first (the caller dialing), then the pipeline speaks
   * the greeting, and the caller says its first line once the greeting has been played.
   */
  private async runAudioInboundCall(request: InboundCallRequest, carried: Carried, audio: NonNullable<SimulatedProviderOptions["audio"]>): Promise<void> {
    const { signal } = carried.controller;
    let pipeline: VoicePipeline | undefined;
    const caller = new SimulatedCallee({
      lines: simulatedCallerLines(request.config, true),
      tts: audio.calleeVoice(),
      turnMs: request.config.voice.simulated.turn_ms,
      hear: (frame) => pipeline?.hear(frame),
      signal,
      agentSpeaksFirst: true,
    });
    if (!(await caller.prepare())) return;
    pipeline = await this.calls.startPipeline(request, caller, this.options.speech, carried, Date.now());
    void pipeline?.greet(request.greeting);
    if (pipeline && (await caller.run())) await this.sink.ended(request.callId, "user_hangup");
  }

  /** A phone call in text mode: the simulated callee's lines and the agent's replies go through the pipeline as text. */
  private async runTextPhoneCall(request: PhoneCallRequest, carried: Carried): Promise<void> {
    const { signal } = carried.controller;
    const { ring_ms: ringMs, turn_ms: turnMs } = request.config.voice.simulated;
    if (!(await sleep(ringMs, signal)) || !(await this.sink.connected(request.callId))) return;
    const callee = new SimulatedTextCallee(simulatedCallerLines(request.config), turnMs, signal);
    const pipeline = this.calls.startTextPipeline(request, callee, this.options.speech, carried);
    if (await callee.run(pipeline)) await this.sink.ended(request.callId, "user_hangup");
  }

  /** An inbound call in text mode: the greeting is the agent's first turn, then the caller says its lines. */
  private async runTextInboundCall(request: InboundCallRequest, carried: Carried): Promise<void> {
    const { signal } = carried.controller;
    const caller = new SimulatedTextCallee(simulatedCallerLines(request.config, true), request.config.voice.simulated.turn_ms, signal);
    const pipeline = this.calls.startTextPipeline(request, caller, this.options.speech, carried);
    if ((await pipeline.greet(request.greeting)) && (await caller.run(pipeline))) await this.sink.ended(request.callId, "user_hangup");
  }
}
