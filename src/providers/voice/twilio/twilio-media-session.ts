import type { Logger } from "pino";
import { PIPELINE_SAMPLE_RATE, StreamResampler } from "../../speech/audio.js";
import { decodeMuLaw, encodeMuLaw } from "../../speech/mulaw.js";
import type { AudioTransport } from "../../speech/pipeline/transport.js";
import type { Closable } from "../live-sockets.js";
import { isRecord } from "../vendor-http.js";

const twilioSampleRate = 8000;
/** Twilio sends `start` right after connecting; a socket that has not authenticated by then is not Twilio's. */
const startDeadlineMs = 10_000;
/** Frames kept while a stream's token is checked and its speech pipeline starts: 10 s of audio, far more than either takes. */
const maxEarlyFrames = 500;

export interface TwilioSocket {
  send(text: string): void;
  close(code: number, reason: string): void;
}

/** Where the caller's audio goes once the call's speech pipeline runs: 16 kHz PCM frames. */
export interface CallListener {
  hear(samples: Int16Array): void;
}

/** The call behind a media stream, once its token checked out. */
export interface TwilioMediaCall {
  callId: string;
  /** The caller hung up, or Twilio stopped the stream. */
  hungUp(): Promise<void>;
  /**
   * Starts the call's speech pipeline on this stream; undefined when it cannot run (a speech engine is missing), in
   * which case the call has been ended for that reason.
   */
  attach(transport: AudioTransport): Promise<CallListener | undefined>;
  log: Logger;
}

export interface TwilioMediaPort {
  /** Checks the stream's token and makes the call ongoing, carried by this instance; undefined when refused. */
  begin(callId: string, token: string, callSid: string): Promise<TwilioMediaCall | undefined>;
}

/**
 * Parley's side of a Twilio bidirectional media stream (Twilio's "Media Streams – WebSocket messages"): Twilio sends
 * `connected`, `start` (with the `<Parameter>`s of the TwiML, among them the token that authenticates the stream),
 * `media` (μ-law 8 kHz, base64), `mark` (a mark Parley sent has been played), `dtmf` and `stop`. Parley sends `media`,
 * a `mark` at the end of each of the agent's sentences, and `clear` when the caller barges in. Nothing but
 * `connected` is accepted before an authenticated `start`; a stream whose token is wrong is closed with 4403.
 *
 * The session is the speech pipeline's transport for the call: it converts at its edge (μ-law 8 kHz ↔ PCM 16 kHz)
 * and the pipeline does the rest, the recording of both sides included. The pipeline paces the agent's audio in
 * real time on its own clock, so Twilio's echoed marks are not waited for.
 */
export class TwilioMediaSession implements AudioTransport, Closable {
  private call: TwilioMediaCall | undefined;
  private listener: CallListener | undefined;
  private starting = false;
  private streamSid: string | undefined;
  private finished = false;
  private readonly early: Record<string, unknown>[] = [];
  private readonly startDeadline: NodeJS.Timeout;
  /** Twilio carries calls as 8 kHz μ-law. */
  readonly callerChannel = "telephone";
  private readonly callerAudio = new StreamResampler(twilioSampleRate, PIPELINE_SAMPLE_RATE);
  private readonly agentAudio = new StreamResampler(PIPELINE_SAMPLE_RATE, twilioSampleRate);

  constructor(
    private readonly callId: string,
    private readonly port: TwilioMediaPort,
    private readonly socket: TwilioSocket,
  ) {
    this.startDeadline = setTimeout(() => {
      if (this.call) return;
      this.finished = true;
      this.socket.close(4403, "stream not authorized");
    }, startDeadlineMs);
    this.startDeadline.unref();
  }

  receive(text: string): void {
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      return;
    }
    if (!isRecord(message)) return;
    if (message["event"] === "start") {
      void this.start(message);
      return;
    }
    // Twilio sends audio right after `start`, while its token is checked and the pipeline starts: kept until then.
    if (this.starting && !this.listener && !this.finished) {
      if (this.early.length < maxEarlyFrames) this.early.push(message);
      return;
    }
    if (this.call) this.handle(message);
  }

  play(frame: Int16Array): void {
    if (!this.streamSid || this.finished) return;
    const payload = encodeMuLaw(this.agentAudio.push(frame));
    this.send({ event: "media", streamSid: this.streamSid, media: { payload: Buffer.from(payload).toString("base64") } });
  }

  mark(name: string): void {
    if (!this.streamSid || this.finished) return;
    this.send({ event: "mark", streamSid: this.streamSid, mark: { name } });
  }

  clear(): void {
    if (!this.streamSid || this.finished) return;
    this.send({ event: "clear", streamSid: this.streamSid });
  }

  /** A telephone has no screen: the live transcript reaches the thread's events instead, as utterances are stored. */
  notify(): void {}

  /** Parley ends the call (or the server stops): the stream is closed, which ends Twilio's `<Connect>` and the call. */
  close(code: number, reason: string): void {
    this.stop(false);
    this.socket.close(code, reason);
  }

  socketClosed(): void {
    clearTimeout(this.startDeadline);
    this.stop(true);
  }

  private handle(message: Record<string, unknown>): void {
    const event = message["event"];
    if (event === "media") this.media(message["media"]);
    else if (event === "stop") this.stop(true);
  }

  private async start(message: Record<string, unknown>): Promise<void> {
    if (this.call || this.starting) return;
    this.starting = true;
    const start = message["start"];
    const parameters = isRecord(start) && isRecord(start["customParameters"]) ? start["customParameters"] : {};
    const token = typeof parameters["token"] === "string" ? parameters["token"] : "";
    const callSid = isRecord(start) && typeof start["callSid"] === "string" ? start["callSid"] : "";
    const streamSid = typeof message["streamSid"] === "string" ? message["streamSid"] : isRecord(start) && typeof start["streamSid"] === "string" ? start["streamSid"] : "";
    const call = streamSid ? await this.port.begin(this.callId, token, callSid).catch(() => undefined) : undefined;
    if (!call) {
      this.early.length = 0;
      this.finished = true;
      this.socket.close(4403, "stream not authorized");
      return;
    }
    clearTimeout(this.startDeadline);
    if (this.finished) {
      // The socket closed while the call was being connected: the caller is gone already.
      this.hangUp(call);
      return;
    }
    this.call = call;
    this.streamSid = streamSid;
    const listener = await call.attach(this).catch((error: unknown) => {
      call.log.error({ err: error, callId: call.callId }, "starting a Twilio call's speech failed");
      return undefined;
    });
    if (!listener || this.finished) {
      this.early.length = 0;
      return;
    }
    this.listener = listener;
    for (const early of this.early.splice(0)) this.handle(early);
  }

  private media(media: unknown): void {
    if (!isRecord(media) || typeof media["payload"] !== "string" || (media["track"] !== undefined && media["track"] !== "inbound")) return;
    this.listener?.hear(this.callerAudio.push(decodeMuLaw(Buffer.from(media["payload"], "base64"))));
  }

  /** The stream is over: a caller's hang-up ends the call. */
  private stop(byCaller: boolean): void {
    if (this.finished) return;
    this.finished = true;
    if (this.call && byCaller) this.hangUp(this.call);
  }

  private hangUp(call: TwilioMediaCall): void {
    void call.hungUp().catch((error: unknown) => call.log.warn({ err: error, callId: call.callId }, "ending a Twilio call failed"));
  }

  private send(frame: Record<string, unknown>): void {
    this.socket.send(JSON.stringify(frame));
  }
}
