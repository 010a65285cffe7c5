import { pcmToBytes } from "../../speech/audio.js";
import type { SpeechCalls } from "../../speech/pipeline/speech-calls.js";
import type { AudioTransport, CallTransport } from "../../speech/pipeline/transport.js";
import type { VoicePipeline } from "../../speech/pipeline/voice-pipeline.js";
import type { Carried, CarriedCalls } from "../carried-calls.js";
import type { ProviderCall, WebCallClient, WebCallConnection, WebCallHost } from "../../../domain/calls/ports.js";

export interface WebCallTransportOptions {
  /** The agent's reply as a WAV clip, for web clients that asked for audio (text-only mode). */
  speak(text: string): Promise<Buffer>;
  speech: SpeechCalls;
  /** `audio`: the call runs through every stage of the speech pipeline; `text` (`SPEECH_MODE=text`): without its audio stages. */
  mode: "audio" | "text";
}

/**
 * Browser web calls hosted by this process: the client joins over the call's WebSocket and talks through its
 * microphone (binary 16 kHz PCM frames) or in text turns, both of which go to the call's pipeline. In text mode the
 * pipeline has no audio stages and the client speaks the older text protocol (`agent_delta`, `agent_message`,
 * `agent_audio`). The call is carried here from the join until it ends.
 */
export class WebCallTransport implements WebCallHost {
  constructor(
    private readonly calls: CarriedCalls,
    private readonly options: WebCallTransportOptions,
  ) {}

  join(request: ProviderCall, client: WebCallClient, options: { audio: boolean }): WebCallConnection {
    const { sink, log } = this.calls;
    const carried = this.calls.carry(request.callId);
    carried.client = client;
    const { signal } = carried.controller;
    const text = this.options.mode === "text";
    const pipeline = (async () => {
      if (!(await sink.connected(request.callId))) {
        this.calls.release(request.callId, carried);
        client.send({ type: "error", detail: "This call can no longer be joined" });
        client.close(4409, "call not joinable");
        return undefined;
      }
      const connectedAt = Date.now();
      client.send({ type: "call.started", call_id: request.callId });
      return this.startPipeline(request, client, carried, connectedAt, options.audio);
    })().catch((error: unknown) => {
      log.error({ err: error, callId: request.callId }, "joining a web call failed");
      client.close(1011, "internal error");
      return undefined;
    });
    let live: VoicePipeline | undefined;
    void pipeline.then((started) => {
      live = started;
    });
    let queue = Promise.resolve();
    const inOrder = (work: (started: VoicePipeline) => Promise<unknown>) => {
      queue = queue
        .then(async () => {
          const started = await pipeline;
          if (started && !signal.aborted) await work(started);
        })
        .catch((error: unknown) => this.calls.fail(request.callId, "error_provider", error));
    };
    return {
      receive: (message) => {
        if (message.type === "hangup") return inOrder(() => sink.ended(request.callId, "user_hangup"));
        // A text client's turns are answered one after the other, as chat turns are; a typed turn in a call with
        // audio interrupts the agent, as speech does.
        inOrder(async (started) => {
          const answered = started.textTurn(message.text);
          if (text) await answered;
        });
      },
      receiveAudio: (samples) => {
        if (text) client.send({ type: "error", detail: "This server runs calls in text-only mode (SPEECH_MODE=text): send text turns" });
        else live?.hear(samples);
      },
      disconnected: () => {
        void pipeline
          .then(async (started) => {
            if (started && !signal.aborted) await sink.ended(request.callId, "user_hangup");
          })
          .catch((error: unknown) => log.warn({ err: error, callId: request.callId }, "ending a web call failed"));
      },
    };
  }

  private startPipeline(request: ProviderCall, client: WebCallClient, carried: Carried, connectedAt: number, withClips: boolean): Promise<VoicePipeline | undefined> {
    const { speech } = this.options;
    if (this.options.mode === "text") return Promise.resolve(this.calls.startTextPipeline(request, this.textProtocol(request.callId, client, withClips), speech, carried));
    const transport: AudioTransport = {
      play: (frame) => client.sendAudio(pcmToBytes(frame)),
      clear: () => client.send({ type: "clear" }),
      mark: () => undefined,
      notify: (notice) => client.send(notice),
    };
    return this.calls.startPipeline(request, transport, speech, carried, connectedAt);
  }

  /**
   * The older text protocol, from the pipeline's notices: each agent turn as `agent_delta` frames while it streams,
   * then `agent_message`, then its WAV (`agent_audio`) for a client that asked for audio, each naming the client's turn.
   */
  private textProtocol(callId: string, client: WebCallClient, withClips: boolean): CallTransport {
    let turn = 0;
    return {
      notify: (notice) => {
        if (notice.type !== "transcript") return;
        if (notice.role === "user") {
          turn += 1;
          return;
        }
        if (!notice.final) return client.send({ type: "agent_delta", turn, text: notice.text });
        client.send({ type: "agent_message", turn, text: notice.text });
        if (withClips) return this.sendClip(callId, client, turn, notice.text);
      },
    };
  }

  private async sendClip(callId: string, client: WebCallClient, turn: number, text: string): Promise<void> {
    try {
      client.send({ type: "agent_audio", turn, format: "wav", data: (await this.options.speak(text)).toString("base64") });
    } catch (error) {
      this.calls.fail(callId, "error_provider", error);
    }
  }
}
