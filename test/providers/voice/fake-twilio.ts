/**
 * A fake Twilio for tests, speaking Twilio's documented protocols on loopback:
 * - the REST API's Calls resource (`POST /2010-04-01/Accounts/{sid}/Calls.json`, and `…/Calls/{CallSid}.json` to
 *   update one), form bodies with Basic auth, recording every form it received;
 * - status callbacks signed as Twilio signs them (`X-Twilio-Signature`, made by the `twilio` package's own
 *   getExpectedTwilioSignature);
 * - a number's voice webhook, called as Twilio calls it when someone dials the number (`ringNumber`): the form of an
 *   incoming call, signed the same way, and the TwiML it is answered with;
 * - the Twilio side of a bidirectional media stream (`TwilioStream`): `connected`, `start` with the TwiML's
 *   parameters, `media` (μ-law 8 kHz) and `stop`, playing what Parley sends back in real time, echoing its marks
 *   when played and obeying `clear`.
 */
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { getExpectedTwilioSignature } from "twilio/lib/webhooks/webhooks.js";
import WebSocket from "ws";
import { FliteTts } from "../../../src/providers/speech/flite/flite-tts.js";
import { decodeMuLaw, encodeMuLaw } from "../../../src/providers/speech/mulaw.js";
import { concatSamples, espeakCli } from "../../support/speech-audio.js";

export interface TwilioForm {
  path: string;
  authorization: string | undefined;
  form: URLSearchParams;
}

export type TwilioBehaviour = { kind: "ok" } | { kind: "status"; status: number } | { kind: "hang" };

export interface FakeTwilio {
  url: string;
  forms: TwilioForm[];
  behave(behaviour: TwilioBehaviour): void;
  close(): Promise<void>;
}

export function sid(prefix: string): string {
  return prefix + randomBytes(16).toString("hex");
}

export async function startFakeTwilio(accountSid: string, authToken: string): Promise<FakeTwilio> {
  const forms: TwilioForm[] = [];
  let behaviour: TwilioBehaviour = { kind: "ok" };
  const expected = `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString("base64")}`;
  const server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString()));
    request.on("end", () => {
      const url = request.url ?? "";
      forms.push({ path: url, authorization: request.headers.authorization, form: new URLSearchParams(body) });
      const answer = (status: number, payload: unknown) => {
        response.writeHead(status, { "content-type": "application/json" });
        response.end(JSON.stringify(payload));
      };
      if (behaviour.kind === "hang") return;
      if (behaviour.kind === "status") {
        return answer(behaviour.status, { code: 20500, message: "Internal Server Error", more_info: "https://www.twilio.com/docs/errors/20500", status: behaviour.status });
      }
      if (request.headers.authorization !== expected) return answer(401, { code: 20003, message: "Authenticate", status: 401 });
      const calls = `/2010-04-01/Accounts/${accountSid}/Calls`;
      if (request.method === "POST" && url === `${calls}.json`) {
        const form = new URLSearchParams(body);
        return answer(201, { sid: sid("CA"), account_sid: accountSid, to: form.get("To"), from: form.get("From"), status: "queued", direction: "outbound-api", api_version: "2010-04-01" });
      }
      const update = new RegExp(`^${calls}/(CA[0-9a-f]{32})\\.json$`).exec(url);
      if (request.method === "POST" && update) return answer(200, { sid: update[1], status: new URLSearchParams(body).get("Status") ?? "in-progress" });
      return answer(404, { code: 20404, message: "The requested resource was not found", status: 404 });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    forms,
    behave(next) {
      behaviour = next;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A status callback's form as Twilio posts it, and its signature over the callback URL and parameters. */
export function signedStatus(authToken: string, callbackUrl: string, params: Record<string, string>): { body: string; signature: string } {
  return { body: new URLSearchParams(params).toString(), signature: getExpectedTwilioSignature(authToken, callbackUrl, params) };
}

/** A call to one of a Twilio account's numbers, as its voice webhook describes it. */
export interface IncomingCall {
  accountSid: string;
  callSid: string;
  from: string;
  to: string;
}

/** The form Twilio posts to a number's voice webhook for an incoming call (Twilio's "TwiML voice request" parameters). */
export function incomingCallForm(call: IncomingCall): Record<string, string> {
  return {
    AccountSid: call.accountSid,
    ApiVersion: "2010-04-01",
    CallSid: call.callSid,
    CallStatus: "ringing",
    Called: call.to,
    Caller: call.from,
    Direction: "inbound",
    From: call.from,
    FromCountry: "US",
    To: call.to,
    ToCountry: "US",
  };
}

/**
 * Twilio calling a number's voice webhook when someone dials the number: the form of the incoming call, signed with
 * `authToken` over `webhookUrl` (the URL configured on the number, which the signature covers), posted for real to
 * `postTo` (the server's own address). The answer's status, content type and body (TwiML when 200).
 */
export async function ringNumber(postTo: string, webhookUrl: string, authToken: string, call: IncomingCall, signature?: string): Promise<{ status: number; contentType: string; body: string }> {
  const params = incomingCallForm(call);
  const response = await fetch(postTo, {
    method: "POST",
    headers: { "content-type": "application/x-www-form-urlencoded", "x-twilio-signature": signature ?? getExpectedTwilioSignature(authToken, webhookUrl, params) },
    body: new URLSearchParams(params).toString(),
  });
  return { status: response.status, contentType: response.headers.get("content-type") ?? "", body: await response.text() };
}

/** The `<Stream url>` and its `token` parameter from a call's TwiML. */
export function streamOf(twiml: string): { url: string; token: string } {
  const url = /<Stream url="([^"]+)"/.exec(twiml)?.[1];
  const token = /<Parameter name="token" value="([^"]+)"/.exec(twiml)?.[1];
  if (!url || !token) throw new Error(`no Stream in ${twiml}`);
  return { url: url.replace(/&amp;/g, "&"), token: token.replace(/&amp;/g, "&") };
}

/** Speech made by eSpeak NG (the Debian package's command line), as Twilio carries it: μ-law at 8 kHz. */
export async function espeakMulaw(text: string): Promise<Uint8Array> {
  return encodeMuLaw((await espeakCli(text, { sampleRate: 8000 })).samples);
}

/**
 * Speech made by flite's `kal`, a voice recorded at 8 kHz, as Twilio carries it: μ-law at 8 kHz. Where a test needs
 * the recognizer to hear words at all, not only to cope with what it hears: a short eSpeak line on a telephone line
 * is sometimes heard as nothing, and then there is no turn.
 */
export async function fliteMulaw(text: string): Promise<Uint8Array> {
  const audio = await new FliteTts("kal").synthesize(text);
  if (audio.sampleRate !== 8000) throw new Error(`flite kal spoke at ${audio.sampleRate} Hz`);
  return encodeMuLaw(audio.samples);
}

export interface OutboundFrame {
  event: string;
  streamSid?: string;
  media?: { payload: string };
  mark?: { name: string };
}

/** 20 ms of silence in μ-law (0xFF is zero). */
const silentFrame = new Uint8Array(160).fill(0xff);

interface QueuedClip {
  samples: Int16Array;
  /** When Twilio starts playing it to the caller (ms, performance.now()). */
  startsAt: number;
  /** Set by a `clear` that arrived while it was queued or playing: how much of it was played. */
  playedSamples?: number;
}

/**
 * Twilio's end of a bidirectional media stream. It plays what Parley sends in real time, as Twilio does: each `media`
 * payload is queued behind the previous one, a `mark` is echoed when the audio before it has been played, and `clear`
 * drops what is queued and echoes the marks still pending at once (Twilio's documented behaviour).
 */
export class TwilioStream {
  readonly received: OutboundFrame[] = [];
  /** When each of `received` arrived (performance.now()). */
  readonly receivedAt: number[] = [];
  /** The marks Twilio echoed, in order, with whether the audio before them was played (false: a clear dropped it). */
  readonly echoed: { name: string; played: boolean }[] = [];
  closed: { code: number; reason: string } | undefined;
  readonly streamSid = sid("MZ");
  private sequence = 0;
  private timestampMs = 0;
  private readonly clips: QueuedClip[] = [];
  private queueEnd = 0;
  private readonly pendingMarks = new Map<string, NodeJS.Timeout>();
  private readonly queued: { payload: Uint8Array; voiced: boolean }[] = [];
  private line: NodeJS.Timeout | undefined;
  private lastSpeechAt = 0;
  private constructor(private readonly socket: WebSocket) {
    socket.on("message", (data) => this.outbound(JSON.parse(String(data)) as OutboundFrame));
    socket.on("close", (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      this.stopLine();
      for (const timer of this.pendingMarks.values()) clearTimeout(timer);
    });
  }

  static open(url: string): Promise<TwilioStream> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url);
      const stream = new TwilioStream(socket);
      socket.once("open", () => resolve(stream));
      socket.once("error", reject);
    });
  }

  private outbound(frame: OutboundFrame): void {
    const now = performance.now();
    this.received.push(frame);
    this.receivedAt.push(now);
    if (frame.event === "media" && frame.media) {
      const samples = decodeMuLaw(Buffer.from(frame.media.payload, "base64"));
      const startsAt = Math.max(now, this.queueEnd);
      this.clips.push({ samples, startsAt });
      this.queueEnd = startsAt + (samples.length * 1000) / 8000;
    } else if (frame.event === "mark" && frame.mark) {
      const name = frame.mark.name;
      this.pendingMarks.set(name, setTimeout(() => this.echo(name, true), Math.max(0, this.queueEnd - now)));
    } else if (frame.event === "clear") {
      for (const clip of this.clips) {
        if (clip.playedSamples === undefined && clip.startsAt + (clip.samples.length * 1000) / 8000 > now) {
          clip.playedSamples = Math.max(0, Math.min(clip.samples.length, Math.round(((now - clip.startsAt) * 8000) / 1000)));
        }
      }
      this.queueEnd = now;
      for (const [name, timer] of [...this.pendingMarks]) {
        clearTimeout(timer);
        this.echo(name, false);
      }
    }
  }

  private echo(name: string, played: boolean): void {
    this.pendingMarks.delete(name);
    this.echoed.push({ name, played });
    if (this.socket.readyState === WebSocket.OPEN) this.send({ event: "mark", streamSid: this.streamSid, mark: { name } });
  }

  start(accountSid: string, callSid: string, token: string): void {
    this.send({ event: "connected", protocol: "Call", version: "1.0.0" });
    this.send({
      event: "start",
      sequenceNumber: String(++this.sequence),
      start: {
        accountSid,
        streamSid: this.streamSid,
        callSid,
        tracks: ["inbound"],
        customParameters: { token },
        mediaFormat: { encoding: "audio/x-mulaw", sampleRate: 8000, channels: 1 },
      },
      streamSid: this.streamSid,
    });
  }

  /** Sends the caller's audio at once, in Twilio's 20 ms frames with Twilio's timestamps (ms from the stream's start). */
  speak(mulaw: Uint8Array): void {
    for (let offset = 0; offset < mulaw.length; offset += 160) this.frame(mulaw.subarray(offset, offset + 160));
  }

  /**
   * Streams the line as Twilio does during a live call: a 20 ms frame every 20 ms, the caller's speech when some is
   * queued (`say`), silence otherwise. Stopped by `stop` or when the socket closes.
   */
  startLine(): void {
    const began = performance.now();
    let sent = 0;
    this.line = setInterval(() => {
      if (this.closed) return this.stopLine();
      const due = Math.floor((performance.now() - began) / 20);
      for (; sent < due; sent++) {
        const speech = this.queued.shift();
        this.frame(speech?.payload ?? silentFrame);
        if (speech?.voiced) this.lastSpeechAt = performance.now();
      }
    }, 10);
  }

  /**
   * Queues the caller's speech on the line; resolves once it has all been sent, with when its last voiced frame went
   * (the end of the speech, not of the clip's trailing silence).
   */
  async say(mulaw: Uint8Array): Promise<number> {
    for (let offset = 0; offset < mulaw.length; offset += 160) {
      const frame = new Uint8Array(160).fill(0xff);
      frame.set(mulaw.subarray(offset, offset + 160));
      this.queued.push({ payload: frame, voiced: decodeMuLaw(frame).some((sample) => Math.abs(sample) > 1000) });
    }
    while (this.queued.length > 0 && !this.closed) await new Promise((resolve) => setTimeout(resolve, 5));
    return this.lastSpeechAt;
  }

  private stopLine(): void {
    clearInterval(this.line);
    this.line = undefined;
  }

  private frame(payload: Uint8Array): void {
    this.send({
      event: "media",
      sequenceNumber: String(++this.sequence),
      media: { track: "inbound", chunk: String(this.sequence), timestamp: String(this.timestampMs), payload: Buffer.from(payload).toString("base64") },
      streamSid: this.streamSid,
    });
    this.timestampMs += 20;
  }

  stop(accountSid: string, callSid: string): void {
    this.stopLine();
    this.send({ event: "stop", sequenceNumber: String(++this.sequence), streamSid: this.streamSid, stop: { accountSid, callSid } });
  }

  /** Parley has stopped talking: every mark it sent has been played, and nothing came for a second. */
  playedOut(): boolean {
    return this.echoed.length === this.received.filter((frame) => frame.event === "mark").length && performance.now() - (this.receivedAt.at(-1) ?? 0) > 1000;
  }

  /** The agent's audio Parley sent, decoded, whether or not it was played. */
  sentAudio(): Int16Array {
    return concatSamples(...this.clips.map((clip) => clip.samples));
  }

  /** The agent's audio the caller heard: what was sent, less what a `clear` dropped. */
  playedAudio(): Int16Array {
    return concatSamples(...this.clips.map((clip) => clip.samples.subarray(0, clip.playedSamples ?? clip.samples.length)));
  }

  send(frame: Record<string, unknown>): void {
    this.socket.send(JSON.stringify(frame));
  }

  async waitClosed(timeoutMs = 5_000): Promise<{ code: number; reason: string }> {
    const deadline = Date.now() + timeoutMs;
    while (!this.closed) {
      if (Date.now() > deadline) throw new Error("stream did not close");
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    return this.closed;
  }

  close(): void {
    this.socket.close();
  }
}
