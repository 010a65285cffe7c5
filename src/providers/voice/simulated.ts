import { randomBytes } from "node:crypto";
import type { Logger } from "pino";
import type { DisconnectionReason } from "../../domain/calls/call-states.js";
import { ProviderError } from "../llm/types.js";
import { pcmToBytes } from "../speech/audio.js";
import type { VoicePipeline } from "../speech/pipeline/voice-pipeline.js";
import type { TextToSpeech } from "../speech/tts.js";
import { SimulatedCallee } from "./simulated-callee.js";
import { simulatedCallerLines } from "./simulated-caller.js";
import { isSpeechUnavailable, type SpeechCalls } from "../speech/pipeline/speech-calls.js";
import type {
  CallEventSink,
  PhoneCallRequest,
  ProviderCall,
  TranscriptItem,
  VoiceProvider,
  WebCallClient,
  WebCallConnection,
  WebCallHost,
} from "./types.js";

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

interface Carried {
  controller: AbortController;
  client?: WebCallClient;
  limit?: NodeJS.Timeout;
}

/** Resolves true after `ms`, or false as soon as `signal` aborts. */
function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
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
 * The embedded voice provider: no network, no telephony. A phone call rings for `ring_ms`, then the simulated callee
 * says its lines `turn_ms` apart, the agent answering each, and hangs up after its last line. A web call is hosted
 * here too: its client joins over a WebSocket and talks in text. Calls live in this process, which is why the
 * domain records which instance carries each one (see CallSupervisor).
 */
export class SimulatedVoiceProvider implements VoiceProvider, WebCallHost {
  readonly name = "simulated";
  private readonly carried = new Map<string, Carried>();

  constructor(
    private readonly sink: CallEventSink,
    private readonly options: SimulatedProviderOptions,
  ) {}

  async createPhoneCall(request: PhoneCallRequest): Promise<void> {
    const carried = this.carry(request.callId);
    const audio = this.options.audio;
    void (audio ? this.runAudioPhoneCall(request, carried, audio) : this.runPhoneCall(request, carried))
      .catch((error: unknown) => this.fail(request.callId, "error_provider", error))
      .finally(() => this.release(request.callId, carried));
  }

  async createWebCall(request: ProviderCall): Promise<void> {
    const carried = this.carry(request.callId);
    void (async () => {
      if (await sleep(request.config.voice.simulated.ring_ms, carried.controller.signal)) {
        await this.sink.webCallReady(request.callId, randomBytes(24).toString("base64url"));
      }
    })()
      .catch((error: unknown) => this.fail(request.callId, "error_provider", error))
      // Until its client joins, nobody carries a web call: the join may reach any instance.
      .finally(() => this.release(request.callId, carried));
  }

  join(request: ProviderCall, client: WebCallClient, options: { audio: boolean }): WebCallConnection {
    if (this.options.audio) return this.joinWithAudio(request, client, this.options.audio.speech);
    const carried = this.carry(request.callId);
    carried.client = client;
    const { signal } = carried.controller;
    const transcript: TranscriptItem[] = [];
    let turn = 0;
    let queue = Promise.resolve();
    const started = (async () => {
      if (!(await this.sink.connected(request.callId))) {
        this.release(request.callId, carried);
        client.send({ type: "error", detail: "This call can no longer be joined" });
        client.close(4409, "call not joinable");
        return false;
      }
      client.send({ type: "call.started", call_id: request.callId });
      this.limitDuration(request, carried);
      return true;
    })().catch((error: unknown) => {
      this.options.log.error({ err: error, callId: request.callId }, "joining a web call failed");
      client.close(1011, "internal error");
      return false;
    });
    const handle = async (message: Parameters<WebCallConnection["receive"]>[0]) => {
      if (!(await started) || signal.aborted) return;
      if (message.type === "hangup") {
        await this.sink.ended(request.callId, "user_hangup");
        return;
      }
      transcript.push({ role: "user", content: message.text });
      turn += 1;
      const current = turn;
      const reply = await this.reply(request, transcript, signal, (text) => client.send({ type: "agent_delta", turn: current, text }));
      if (reply === undefined) return;
      transcript.push({ role: "agent", content: reply });
      client.send({ type: "agent_message", turn: current, text: reply });
      if (options.audio) client.send({ type: "agent_audio", turn: current, format: "wav", data: (await this.options.speak(reply)).toString("base64") });
    };
    return {
      receive: (message) => {
        queue = queue.then(() => handle(message)).catch((error: unknown) => this.fail(request.callId, "error_provider", error));
      },
      receiveAudio: () => client.send({ type: "error", detail: "This server runs calls in text-only mode (SPEECH_MODE=text): send text turns" }),
      disconnected: () => {
        void started.then(async (live) => {
          if (live && !signal.aborted) await this.sink.ended(request.callId, "user_hangup");
        }).catch((error: unknown) => this.options.log.warn({ err: error, callId: request.callId }, "ending a web call failed"));
      },
    };
  }

  async endCall(callId: string, reason: DisconnectionReason): Promise<void> {
    await this.options.audio?.speech.drop(callId);
    const carried = this.carried.get(callId);
    if (!carried) return;
    this.release(callId, carried);
    carried.client?.send({ type: "call.ended", reason });
    carried.client?.send({ type: "end", reason });
    carried.client?.close(1000, "call ended");
  }

  async close(): Promise<void> {
    for (const [callId, carried] of [...this.carried]) {
      this.release(callId, carried);
      await this.options.audio?.speech.drop(callId);
      carried.client?.close(1001, "server shutting down");
    }
  }

  /** A phone call with real audio: the simulated callee speaks, the pipeline hears it and speaks the agent's answers. */
  private async runAudioPhoneCall(request: PhoneCallRequest, carried: Carried, audio: NonNullable<SimulatedProviderOptions["audio"]>): Promise<void> {
    const { signal } = carried.controller;
    const { ring_ms: ringMs, turn_ms: turnMs } = request.config.voice.simulated;
    if (!(await sleep(ringMs, signal)) || !(await this.sink.connected(request.callId))) return;
    const connectedAt = Date.now();
    this.limitDuration(request, carried);
    let pipeline: VoicePipeline | undefined;
    const callee = new SimulatedCallee({
      lines: simulatedCallerLines(request.config),
      tts: audio.calleeVoice(),
      turnMs,
      hear: (frame) => pipeline?.hear(frame),
      signal,
    });
    pipeline = await this.startPipeline(request, callee, audio.speech, carried, connectedAt);
    if (pipeline && (await callee.run())) await this.sink.ended(request.callId, "user_hangup");
  }

  /** A web call whose client talks through its microphone (binary PCM frames) or in text turns. */
  private joinWithAudio(request: ProviderCall, client: WebCallClient, speech: SpeechCalls): WebCallConnection {
    const carried = this.carry(request.callId);
    carried.client = client;
    const { signal } = carried.controller;
    const pipeline = (async () => {
      if (!(await this.sink.connected(request.callId))) {
        this.release(request.callId, carried);
        client.send({ type: "error", detail: "This call can no longer be joined" });
        client.close(4409, "call not joinable");
        return undefined;
      }
      const connectedAt = Date.now();
      client.send({ type: "call.started", call_id: request.callId });
      this.limitDuration(request, carried);
      return this.startPipeline(
        request,
        {
          play: (frame) => client.sendAudio(pcmToBytes(frame)),
          clear: () => client.send({ type: "clear" }),
          mark: () => undefined,
          notify: (notice) => client.send(notice),
        },
        speech,
        carried,
        connectedAt,
      );
    })().catch((error: unknown) => {
      this.options.log.error({ err: error, callId: request.callId }, "joining a web call failed");
      client.close(1011, "internal error");
      return undefined;
    });
    let live: VoicePipeline | undefined;
    void pipeline.then((started) => {
      live = started;
    });
    return {
      receive: (message) => {
        if (message.type === "hangup") {
          void pipeline.then((started) => (started && !signal.aborted ? this.sink.ended(request.callId, "user_hangup") : undefined)).catch((error: unknown) => this.fail(request.callId, "error_provider", error));
          return;
        }
        void pipeline.then((started) => started?.textTurn(message.text));
      },
      receiveAudio: (samples) => live?.hear(samples),
      disconnected: () => {
        void pipeline.then(async (started) => {
          if (started && !signal.aborted) await this.sink.ended(request.callId, "user_hangup");
        }).catch((error: unknown) => this.options.log.warn({ err: error, callId: request.callId }, "ending a web call failed"));
      },
    };
  }

  /** The call's speech pipeline; a missing engine ends the call as `error_speech_unavailable`. */
  private async startPipeline(
    request: ProviderCall,
    transport: Parameters<SpeechCalls["start"]>[1],
    speech: SpeechCalls,
    carried: Carried,
    connectedAt: number,
  ): Promise<VoicePipeline | undefined> {
    try {
      return await speech.start(
        request,
        transport,
        (reason) => {
          carried.controller.abort();
          this.sink.ended(request.callId, reason).catch((error: unknown) => this.options.log.warn({ err: error, callId: request.callId }, "ending a call failed"));
        },
        connectedAt,
      );
    } catch (error) {
      if (!isSpeechUnavailable(error)) throw error;
      this.options.log.error({ callId: request.callId, detail: error.message }, "a call's speech engine is not available");
      carried.client?.send({ type: "error", detail: error.message });
      await this.sink.ended(request.callId, "error_speech_unavailable");
      return undefined;
    }
  }

  private async runPhoneCall(request: PhoneCallRequest, carried: Carried): Promise<void> {
    const { signal } = carried.controller;
    const { ring_ms: ringMs, turn_ms: turnMs } = request.config.voice.simulated;
    if (!(await sleep(ringMs, signal)) || !(await this.sink.connected(request.callId))) return;
    this.limitDuration(request, carried);
    const lines = simulatedCallerLines(request.config);
    const transcript: TranscriptItem[] = [];
    for (const [index, line] of lines.entries()) {
      if (!(await sleep(turnMs, signal))) return;
      transcript.push({ role: "user", content: line });
      if (index === lines.length - 1) {
        if (await request.agent.hear(transcript)) await this.sink.ended(request.callId, "user_hangup");
        return;
      }
      const reply = await this.reply(request, transcript, signal);
      if (reply === undefined) return;
      transcript.push({ role: "agent", content: reply });
    }
    if (await sleep(turnMs, signal)) await this.sink.ended(request.callId, "user_hangup");
  }

  /** The agent's answer; a failing agent ends the call, since a caller cannot be left waiting in silence. */
  private async reply(request: ProviderCall, transcript: TranscriptItem[], signal: AbortSignal, onDelta?: (text: string) => void): Promise<string | undefined> {
    try {
      return await request.agent.respond(transcript, onDelta, signal);
    } catch (error) {
      if (signal.aborted) return undefined;
      this.options.log.warn({ err: error, callId: request.callId }, "the agent failed during a call");
      // Only the model's own failure is blamed on it; storing the turn can fail too (the database refusing it).
      await this.sink.ended(request.callId, error instanceof ProviderError ? "error_llm_websocket_runtime" : "error_provider");
      return undefined;
    }
  }

  private limitDuration(request: ProviderCall, carried: Carried): void {
    carried.limit = setTimeout(() => {
      carried.controller.abort();
      this.sink.ended(request.callId, "max_duration_reached").catch((error: unknown) =>
        this.options.log.warn({ err: error, callId: request.callId }, "ending a call at its maximum duration failed"),
      );
    }, request.config.voice.max_call_seconds * 1000);
  }

  private carry(callId: string): Carried {
    const carried: Carried = { controller: new AbortController() };
    this.carried.set(callId, carried);
    return carried;
  }

  private release(callId: string, carried: Carried): void {
    carried.controller.abort();
    clearTimeout(carried.limit);
    if (this.carried.get(callId) === carried) this.carried.delete(callId);
  }

  private fail(callId: string, reason: DisconnectionReason, error: unknown): void {
    this.options.log.error({ err: error, callId }, "a simulated call failed");
    this.sink.ended(callId, reason).catch(() => undefined);
  }
}
