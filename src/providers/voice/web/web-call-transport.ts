import { pcmToBytes } from "../../speech/audio.js";
import type { SpeechCalls } from "../../speech/pipeline/speech-calls.js";
import type { VoicePipeline } from "../../speech/pipeline/voice-pipeline.js";
import type { CarriedCalls } from "../carried-calls.js";
import type { ProviderCall, TranscriptItem, WebCallClient, WebCallConnection, WebCallHost } from "../../../domain/calls/ports.js";

export interface WebCallTransportOptions {
  /** The agent's reply as a WAV clip, for web clients that asked for audio (text-only mode). */
  speak(text: string): Promise<Buffer>;
  /** Real audio: calls run through the speech pipeline. Without it (`SPEECH_MODE=text`) turns are exchanged as text. */
  speech?: SpeechCalls;
}

/**
 * Browser web calls hosted by this process: the client joins over the call's WebSocket and talks through its
 * microphone (binary 16 kHz PCM frames) or in text turns. The call is carried here from the join until it ends.
 */
export class WebCallTransport implements WebCallHost {
  constructor(
    private readonly calls: CarriedCalls,
    private readonly options: WebCallTransportOptions,
  ) {}

  join(request: ProviderCall, client: WebCallClient, options: { audio: boolean }): WebCallConnection {
    if (this.options.speech) return this.joinWithAudio(request, client, this.options.speech);
    const { sink, log } = this.calls;
    const carried = this.calls.carry(request.callId);
    carried.client = client;
    const { signal } = carried.controller;
    const transcript: TranscriptItem[] = [];
    let turn = 0;
    let queue = Promise.resolve();
    const started = (async () => {
      if (!(await sink.connected(request.callId))) {
        this.calls.release(request.callId, carried);
        client.send({ type: "error", detail: "This call can no longer be joined" });
        client.close(4409, "call not joinable");
        return false;
      }
      client.send({ type: "call.started", call_id: request.callId });
      return true;
    })().catch((error: unknown) => {
      log.error({ err: error, callId: request.callId }, "joining a web call failed");
      client.close(1011, "internal error");
      return false;
    });
    const handle = async (message: Parameters<WebCallConnection["receive"]>[0]) => {
      if (!(await started) || signal.aborted) return;
      if (message.type === "hangup") {
        await sink.ended(request.callId, "user_hangup");
        return;
      }
      transcript.push({ role: "user", content: message.text });
      turn += 1;
      const current = turn;
      const reply = await this.calls.reply(request, transcript, signal, (text) => client.send({ type: "agent_delta", turn: current, text }));
      if (reply === undefined) return;
      transcript.push({ role: "agent", content: reply.text });
      client.send({ type: "agent_message", turn: current, text: reply.text });
      if (options.audio) client.send({ type: "agent_audio", turn: current, format: "wav", data: (await this.options.speak(reply.text)).toString("base64") });
      const [action] = reply.actions;
      if (action) this.calls.act(request.callId, action);
    };
    return {
      receive: (message) => {
        queue = queue.then(() => handle(message)).catch((error: unknown) => this.calls.fail(request.callId, "error_provider", error));
      },
      receiveAudio: () => client.send({ type: "error", detail: "This server runs calls in text-only mode (SPEECH_MODE=text): send text turns" }),
      disconnected: () => {
        void started.then(async (live) => {
          if (live && !signal.aborted) await sink.ended(request.callId, "user_hangup");
        }).catch((error: unknown) => log.warn({ err: error, callId: request.callId }, "ending a web call failed"));
      },
    };
  }

  /** A web call whose client talks through its microphone (binary PCM frames) or in text turns. */
  private joinWithAudio(request: ProviderCall, client: WebCallClient, speech: SpeechCalls): WebCallConnection {
    const { sink, log } = this.calls;
    const carried = this.calls.carry(request.callId);
    carried.client = client;
    const { signal } = carried.controller;
    const pipeline = (async () => {
      if (!(await sink.connected(request.callId))) {
        this.calls.release(request.callId, carried);
        client.send({ type: "error", detail: "This call can no longer be joined" });
        client.close(4409, "call not joinable");
        return undefined;
      }
      const connectedAt = Date.now();
      client.send({ type: "call.started", call_id: request.callId });
      return this.calls.startPipeline(
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
      log.error({ err: error, callId: request.callId }, "joining a web call failed");
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
          void pipeline.then((started) => (started && !signal.aborted ? sink.ended(request.callId, "user_hangup") : undefined)).catch((error: unknown) => this.calls.fail(request.callId, "error_provider", error));
          return;
        }
        void pipeline.then((started) => started?.textTurn(message.text));
      },
      receiveAudio: (samples) => live?.hear(samples),
      disconnected: () => {
        void pipeline.then(async (started) => {
          if (started && !signal.aborted) await sink.ended(request.callId, "user_hangup");
        }).catch((error: unknown) => log.warn({ err: error, callId: request.callId }, "ending a web call failed"));
      },
    };
  }
}
