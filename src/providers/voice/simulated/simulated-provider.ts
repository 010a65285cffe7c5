import { randomBytes } from "node:crypto";
import type { Logger } from "pino";
import type { DisconnectionReason } from "../../../domain/calls/call-states.js";
import type {
  CallEventSink,
  InboundCallRequest,
  PhoneCallRequest,
  ProviderCall,
  SimulatedCallerHost,
  TranscriptItem,
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
import { simulatedCallerLines } from "./simulated-caller.js";

export interface SimulatedProviderOptions {
  /** The agent's reply as a WAV clip, for web clients that asked for audio (text-only mode). */
  speak(text: string): Promise<Buffer>;
  log: Logger;
  /**
   * Real audio: calls run through the speech pipeline, the simulated callee speaking with `calleeVoice`. Without
   * it (the fast text-only mode, `SPEECH_MODE=text`) lines and replies are exchanged as text.
   */
  audio?: { speech: SpeechCalls; calleeVoice(): TextToSpeech };
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
    this.web = new WebCallTransport(this.calls, { speak: options.speak, ...(options.audio ? { speech: options.audio.speech } : {}) });
  }

  async createPhoneCall(request: PhoneCallRequest): Promise<void> {
    const carried = this.calls.carry(request.callId);
    const audio = this.options.audio;
    void (audio ? this.runAudioPhoneCall(request, carried, audio) : this.runPhoneCall(request, carried))
      .catch((error: unknown) => this.calls.fail(request.callId, "error_provider", error))
      .finally(() => this.calls.release(request.callId, carried));
  }

  /** The call is answered already: the agent greets, then the simulated caller says its lines and hangs up. */
  async playSimulatedCaller(request: InboundCallRequest): Promise<void> {
    const carried = this.calls.carry(request.callId);
    const audio = this.options.audio;
    void (audio ? this.runAudioInboundCall(request, carried, audio) : this.runInboundCall(request, carried))
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
    await this.options.audio?.speech.drop(callId);
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
      await this.options.audio?.speech.drop(callId);
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
    pipeline = await this.calls.startPipeline(request, callee, audio.speech, carried, Date.now());
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
    pipeline = await this.calls.startPipeline(request, caller, audio.speech, carried, Date.now());
    pipeline?.greet(request.greeting);
    if (pipeline && (await caller.run())) await this.sink.ended(request.callId, "user_hangup");
  }

  /** An inbound call in text-only mode: the greeting is recorded as the agent's first utterance. */
  private async runInboundCall(request: InboundCallRequest, carried: Carried): Promise<void> {
    const transcript: TranscriptItem[] = [{ role: "agent", content: request.greeting }];
    if (await request.agent.hear(transcript)) await this.converse(request, carried.controller.signal, transcript, true);
  }

  private async runPhoneCall(request: PhoneCallRequest, carried: Carried): Promise<void> {
    const { signal } = carried.controller;
    if (!(await sleep(request.config.voice.simulated.ring_ms, signal)) || !(await this.sink.connected(request.callId))) return;
    await this.converse(request, signal, []);
  }

  /** The simulated person says its lines `turn_ms` apart, the agent answering each, and hangs up after the last (text-only mode). */
  private async converse(request: ProviderCall, signal: AbortSignal, transcript: TranscriptItem[], agentGreeted = false): Promise<void> {
    const turnMs = request.config.voice.simulated.turn_ms;
    const lines = simulatedCallerLines(request.config, agentGreeted);
    for (const [index, line] of lines.entries()) {
      if (!(await sleep(turnMs, signal))) return;
      transcript.push({ role: "user", content: line });
      if (index === lines.length - 1) {
        if (await request.agent.hear(transcript)) await this.sink.ended(request.callId, "user_hangup");
        return;
      }
      const reply = await this.calls.reply(request, transcript, signal);
      if (reply === undefined) return;
      transcript.push({ role: "agent", content: reply.text });
      const [action] = reply.actions;
      if (action) {
        this.calls.act(request.callId, action);
        return;
      }
    }
    if (await sleep(turnMs, signal)) await this.sink.ended(request.callId, "user_hangup");
  }
}
