import type { Logger } from "pino";
import type { CallAudioTransport } from "../call-audio.js";
import type { Closable } from "../live-sockets.js";
import { isRecord } from "../vendor-http.js";
import { encodeWav } from "../wav.js";
import { decodeMulaw, encodeMulaw } from "./mulaw.js";

const twilioSampleRate = 8000;
/** Twilio's own frame: 20 ms of μ-law. */
const frameSamples = 160;
/** Twilio sends `start` right after connecting; a socket that has not authenticated by then is not Twilio's. */
const startDeadlineMs = 10_000;
/** Frames kept while a stream's token is checked: 10 s of audio, far more than the check takes. */
const maxEarlyFrames = 500;
/** A call's audio is kept for its recording; three hours of both sides at 8 kHz is about 170 MB, the most kept. */
const maxRecordedSamples = twilioSampleRate * 3 * 3600;

export interface TwilioSocket {
  send(text: string): void;
  close(code: number, reason: string): void;
}

/** The call behind a media stream, once its token checked out. */
export interface TwilioMediaCall {
  callId: string;
  /** The caller hung up, or Twilio stopped the stream. */
  hungUp(): Promise<void>;
  /** Both sides of the call's audio as a WAV, when the stream ends: the call's recording. */
  saveRecording(wav: Buffer): Promise<void>;
  /** Where the speech pipeline attaches to the call's audio. */
  attach(transport: CallAudioTransport): void;
  /** The stream is over (whoever ended it): what the call held for it is let go. */
  release(): void;
  log: Logger;
}

export interface TwilioMediaPort {
  /** Checks the stream's token and makes the call ongoing, carried by this instance; undefined when refused. */
  begin(callId: string, token: string, callSid: string): Promise<TwilioMediaCall | undefined>;
}

/** One growing mono track, written at sample positions (gaps stay silent). */
class Track {
  private samples = new Int16Array(twilioSampleRate * 10);
  length = 0;

  write(at: number, audio: Int16Array): void {
    const end = Math.min(maxRecordedSamples, at + audio.length);
    if (end <= at) return;
    if (end > this.samples.length) {
      const grown = new Int16Array(Math.min(maxRecordedSamples, Math.max(end, this.samples.length * 2)));
      grown.set(this.samples.subarray(0, this.length));
      this.samples = grown;
    }
    this.samples.set(audio.subarray(0, end - at), at);
    this.length = Math.max(this.length, end);
  }

  truncate(at: number): void {
    if (at >= this.length) return;
    this.samples.fill(0, at, this.length);
    this.length = Math.max(0, at);
  }

  at(index: number): number {
    return index < this.length ? this.samples[index]! : 0;
  }
}

interface Playback {
  name: string;
  /** Sample position (from the stream's start) where this clip ends. */
  end: number;
  resolve(played: boolean): void;
}

/**
 * Parley's side of a Twilio bidirectional media stream (Twilio's "Media Streams – WebSocket messages"): Twilio sends
 * `connected`, `start` (with the `<Parameter>`s of the TwiML, among them the token that authenticates the stream),
 * `media` (μ-law 8 kHz, base64), `mark` (a clip Parley sent has been played), `dtmf` and `stop`. Parley sends
 * `media`, `mark` after each clip, and `clear` to drop what is queued. Nothing but `connected` is accepted before an
 * authenticated `start`; a stream whose token is wrong is closed with 4403.
 *
 * The session is the call's audio transport (CallAudioTransport) and records both sides: the caller's audio where
 * Twilio's timestamps place it, the agent's where it was played (cut where a `clear` stopped it).
 */
export class TwilioMediaSession implements CallAudioTransport, Closable {
  readonly sampleRate = twilioSampleRate;
  private call: TwilioMediaCall | undefined;
  private starting = false;
  private streamSid: string | undefined;
  private startedAt = 0;
  private readonly inbound = new Track();
  private readonly outbound = new Track();
  /** Where the agent's queued audio ends, in samples from the stream's start. */
  private playhead = 0;
  private readonly playbacks: Playback[] = [];
  private markCount = 0;
  private readonly audioListeners: ((samples: Int16Array) => void)[] = [];
  private readonly endListeners: (() => void)[] = [];
  private finished = false;
  private readonly early: Record<string, unknown>[] = [];
  private readonly startDeadline: NodeJS.Timeout;

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
    const event = message["event"];
    if (event === "start") {
      void this.start(message);
      return;
    }
    // Twilio sends the first audio right after `start`, while its token is still being checked: kept until then.
    if (this.starting && !this.call && !this.finished) {
      if (this.early.length < maxEarlyFrames) this.early.push(message);
      return;
    }
    if (this.call) this.handle(message);
  }

  private handle(message: Record<string, unknown>): void {
    const event = message["event"];
    if (event === "media") this.media(message["media"]);
    else if (event === "mark") this.marked(message["mark"]);
    else if (event === "stop") void this.stop(true);
  }

  onAudio(listener: (samples: Int16Array) => void): void {
    this.audioListeners.push(listener);
  }

  onEnd(listener: () => void): void {
    this.endListeners.push(listener);
  }

  play(samples: Int16Array): Promise<boolean> {
    if (!this.call || !this.streamSid || this.finished) return Promise.resolve(false);
    const from = Math.max(this.playhead, this.now());
    this.outbound.write(from, samples);
    this.playhead = from + samples.length;
    const payload = encodeMulaw(samples);
    for (let offset = 0; offset < payload.length; offset += frameSamples) {
      this.sendFrame({ event: "media", streamSid: this.streamSid, media: { payload: Buffer.from(payload.subarray(offset, offset + frameSamples)).toString("base64") } });
    }
    this.markCount += 1;
    const name = `parley-${this.markCount}`;
    this.sendFrame({ event: "mark", streamSid: this.streamSid, mark: { name } });
    return new Promise((resolve) => this.playbacks.push({ name, end: this.playhead, resolve }));
  }

  clear(): void {
    if (!this.streamSid || this.finished) return;
    this.sendFrame({ event: "clear", streamSid: this.streamSid });
    const now = this.now();
    this.outbound.truncate(now);
    this.playhead = now;
    for (const playback of this.playbacks.splice(0)) playback.resolve(false);
  }

  /** Parley ends the call (or the server stops): the recording is kept and the stream closed. */
  close(code: number, reason: string): void {
    void this.stop(false).finally(() => this.socket.close(code, reason));
  }

  socketClosed(): void {
    clearTimeout(this.startDeadline);
    void this.stop(true);
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
      call.release();
      await call.hungUp().catch((error: unknown) => call.log.warn({ err: error, callId: call.callId }, "ending a Twilio call failed"));
      return;
    }
    this.call = call;
    this.streamSid = streamSid;
    this.startedAt = Date.now();
    call.attach(this);
    for (const message of this.early.splice(0)) this.handle(message);
  }

  private media(media: unknown): void {
    if (!isRecord(media) || typeof media["payload"] !== "string" || (media["track"] !== undefined && media["track"] !== "inbound")) return;
    const samples = decodeMulaw(Buffer.from(media["payload"], "base64"));
    const timestamp = Number(media["timestamp"]);
    const at = Number.isFinite(timestamp) && timestamp >= 0 ? Math.round((timestamp / 1000) * twilioSampleRate) : this.inbound.length;
    this.inbound.write(at, samples);
    for (const listener of this.audioListeners) listener(samples);
  }

  private marked(mark: unknown): void {
    if (!isRecord(mark) || typeof mark["name"] !== "string") return;
    const index = this.playbacks.findIndex((playback) => playback.name === mark["name"]);
    if (index < 0) return;
    // Marks come back in the order sent: every clip up to this one has been played.
    for (const playback of this.playbacks.splice(0, index + 1)) playback.resolve(true);
  }

  /** The stream is over: pending clips count as not played, the recording is saved, and a caller's hang-up reported. */
  private async stop(byCaller: boolean): Promise<void> {
    if (this.finished || !this.call) {
      this.finished = true;
      return;
    }
    this.finished = true;
    const call = this.call;
    if (this.playbacks.length > 0) this.outbound.truncate(this.now());
    for (const playback of this.playbacks.splice(0)) playback.resolve(false);
    for (const listener of this.endListeners) listener();
    call.release();
    try {
      await call.saveRecording(this.recording());
    } catch (error) {
      call.log.error({ err: error, callId: call.callId }, "saving a Twilio call's recording failed");
    }
    if (byCaller) await call.hungUp().catch((error: unknown) => call.log.warn({ err: error, callId: call.callId }, "ending a Twilio call failed"));
  }

  private recording(): Buffer {
    const length = Math.max(this.inbound.length, this.outbound.length);
    const mixed = new Int16Array(length);
    for (let i = 0; i < length; i++) mixed[i] = Math.max(-32768, Math.min(32767, this.inbound.at(i) + this.outbound.at(i)));
    return encodeWav({ sampleRate: twilioSampleRate, samples: mixed });
  }

  /** Samples since the stream started, by the wall clock. */
  private now(): number {
    return Math.round(((Date.now() - this.startedAt) / 1000) * twilioSampleRate);
  }

  private sendFrame(frame: Record<string, unknown>): void {
    this.socket.send(JSON.stringify(frame));
  }
}
