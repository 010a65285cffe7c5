import type { Logger } from "pino";
import type { DisconnectionReason } from "../../../domain/calls/call-states.js";
import type { CallAction } from "../../../domain/tools/ports.js";
import { UpstreamError } from "../../../domain/shared/errors.js";
import { ProviderError } from "../../llm/types.js";
import type { CallMedia, ProviderCall } from "../../../domain/calls/ports.js";
import type { SpeechEngines } from "../engines.js";
import { SpeechUnavailableError } from "../errors.js";
import type { VoiceActivityDetector } from "../vad.js";
import { WebRtcVad } from "../webrtc/webrtc-vad.js";
import { CallRecorder } from "./call-recorder.js";
import { callPhrases } from "./phrases.js";
import type { AudioTransport, CallTransport } from "./transport.js";
import { defaultTurnOptions } from "./turn-detector.js";
import { VoicePipeline, type VoicePipelineOptions } from "./voice-pipeline.js";

export interface SpeechCallsOptions {
  engines: SpeechEngines;
  /** Stores a finished call's recording; returns its key. */
  saveRecording(callId: string, wav: Buffer): Promise<string>;
  log: Logger;
  /** Told each agent turn's latency (end of caller speech → first agent audio), for metrics and benchmarks. */
  onTurnLatency?(ms: number): void;
}

interface Live {
  pipeline: VoicePipeline;
  /** The audio stages' own resources: none in text mode. */
  recorder?: CallRecorder;
  vad?: VoiceActivityDetector;
}

/**
 * The calls this instance carries: each one's pipeline, built from its project's `speech` settings, and at its end
 * the recording and timed transcript (see CallLifecycle.setMediaFinalizer). Every provider that carries audio (the
 * simulated one, the web-call socket, a telephony media stream) goes through here, and so do the simulated and web
 * calls of text mode (`SPEECH_MODE=text`), whose pipelines have no audio stages and take no recording.
 */
export class SpeechCalls {
  private readonly live = new Map<string, Live>();
  /** Pipelines still starting, which a call that ends meanwhile waits for, so that none outlives its call. */
  private readonly starting = new Map<string, Promise<unknown>>();

  constructor(private readonly options: SpeechCallsOptions) {}

  /**
   * Starts a connected call's pipeline. Throws SpeechUnavailableError when an engine the project needs is missing;
   * `failed` is told the reason when a stage fails later, `onCallAction` what the agent asked of the call.
   */
  async start(
    request: ProviderCall,
    transport: AudioTransport,
    failed: (reason: DisconnectionReason) => void,
    connectedAt: number = Date.now(),
    onCallAction?: (action: CallAction) => void,
  ): Promise<VoicePipeline> {
    return this.track(request.callId, this.build(request, transport, failed, connectedAt, onCallAction));
  }

  /**
   * Starts a connected call's pipeline without audio stages (text mode): its transport gives the caller's turns as
   * text and delivers the agent's. Nothing is recorded live: the post-call job renders the recording.
   */
  startText(request: ProviderCall, transport: CallTransport, failed: (reason: DisconnectionReason) => void, onCallAction?: (action: CallAction) => void): VoicePipeline {
    const pipeline = new VoicePipeline({
      agent: request.agent,
      transport,
      failed: this.stageFailed(request.callId, failed),
      ...(onCallAction ? { onCallAction } : {}),
      log: this.options.log,
    });
    this.live.set(request.callId, { pipeline });
    return pipeline;
  }

  private async track(callId: string, started: Promise<VoicePipeline>): Promise<VoicePipeline> {
    this.starting.set(callId, started);
    try {
      return await started;
    } finally {
      this.starting.delete(callId);
    }
  }

  private async build(
    request: ProviderCall,
    transport: AudioTransport,
    failed: (reason: DisconnectionReason) => void,
    connectedAt: number,
    onCallAction: ((action: CallAction) => void) | undefined,
  ): Promise<VoicePipeline> {
    const { speech } = request.config;
    const { engines, log } = this.options;
    await engines.check(speech);
    engines.warm(speech).catch((error: unknown) => log.warn({ err: error, callId: request.callId }, "loading the speech recognizer failed"));
    const vad = await WebRtcVad.create();
    const recorder = new CallRecorder(Date.now, connectedAt);
    const pipeline = new VoicePipeline({
      agent: request.agent,
      transport,
      speech: {
        stt: engines.stt(speech.stt, request.speechKeys),
        tts: engines.tts(speech.tts, request.speechKeys),
        vad,
        turn: { ...defaultTurnOptions, endOfTurnMs: speech.end_of_turn_ms, minEndOfTurnMs: speech.min_end_of_turn_ms },
        phrases: callPhrases(speech.stt.keywords, [
          ...request.config.agent.knowledge.flatMap((entry) => [entry.question, entry.answer]),
          request.config.agent.greeting,
          ...Object.values(request.context).filter((value): value is string | number => typeof value === "string" || typeof value === "number").map(String),
        ]),
        playback: transport,
        recorder,
      },
      failed: this.stageFailed(request.callId, failed),
      ...(this.options.onTurnLatency ? { onTurnLatency: this.options.onTurnLatency } : {}),
      ...(onCallAction ? { onCallAction } : {}),
      log,
    });
    this.live.set(request.callId, { pipeline, recorder, vad });
    return pipeline;
  }

  /** How a failing stage ends the call: only the model's own failure is blamed on it. */
  private stageFailed(callId: string, failed: (reason: DisconnectionReason) => void): VoicePipelineOptions["failed"] {
    return (stage, error) => {
      this.options.log.warn({ err: error, callId, stage }, "a stage of a call's speech pipeline failed");
      // Storing the turn can fail too (the database refusing it): that is not the model's failure.
      if (stage !== "agent") failed("error_speech_unavailable");
      else failed(isModelFailure(error) ? "error_llm_websocket_runtime" : "error_provider");
    };
  }

  /**
   * Starts the pipeline of a call whose transport has no way to show an error but ending the call (a telephone
   * line), from the call's request as `prepare` resolves it: a call that ends meanwhile still finds its pipeline.
   * A missing engine ends the call as `error_speech_unavailable`, and the result is undefined.
   */
  async carry(
    callId: string,
    prepare: () => Promise<ProviderCall>,
    transport: AudioTransport,
    failed: (reason: DisconnectionReason) => void,
    onCallAction?: (action: CallAction) => void,
  ): Promise<VoicePipeline | undefined> {
    const connectedAt = Date.now();
    try {
      return await this.track(callId, prepare().then((request) => this.build(request, transport, failed, connectedAt, onCallAction)));
    } catch (error) {
      if (!isSpeechUnavailable(error)) throw error;
      this.options.log.error({ callId, detail: error.message }, "a call's speech engine is not available");
      failed("error_speech_unavailable");
      return undefined;
    }
  }

  /** Stops the call's pipeline and stores its recording; undefined when this instance carries no audio for it. */
  async finish(callId: string): Promise<CallMedia | undefined> {
    const recorder = await this.stop(callId);
    if (!recorder) return undefined;
    const { wav, transcriptObject, endedAt } = recorder.finish();
    return { recordingKey: await this.options.saveRecording(callId, wav), transcriptObject, endedAt };
  }

  /** Drops a call's pipeline without a recording (the instance is shutting down, or the call never connected). */
  async drop(callId: string): Promise<void> {
    await this.stop(callId);
  }

  /** Stops the call's pipeline, one still starting included; its recorder, or undefined when there is none. */
  private async stop(callId: string): Promise<CallRecorder | undefined> {
    await this.starting.get(callId)?.catch(() => undefined);
    const live = this.live.get(callId);
    if (!live) return undefined;
    this.live.delete(callId);
    await live.pipeline.stop();
    live.vad?.close();
    return live.recorder;
  }
}

/** The model failed (directly, or as the agent's turn reports it, an upstream error), not the call's other parts. */
export function isModelFailure(error: unknown): boolean {
  return error instanceof ProviderError || error instanceof UpstreamError;
}

export function isSpeechUnavailable(error: unknown): error is SpeechUnavailableError {
  return error instanceof SpeechUnavailableError;
}
