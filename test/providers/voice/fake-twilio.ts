/**
 * A fake Twilio for tests, speaking Twilio's documented protocols on loopback:
 * - the REST API's Calls resource (`POST /2010-04-01/Accounts/{sid}/Calls.json`, and `…/Calls/{CallSid}.json` to
 *   update one), form bodies with Basic auth, recording every form it received;
 * - status callbacks signed as Twilio signs them (`X-Twilio-Signature`, made by the `twilio` package's own
 *   getExpectedTwilioSignature);
 * - the Twilio side of a bidirectional media stream (`TwilioStream`): `connected`, `start` with the TwiML's
 *   parameters, `media` (μ-law 8 kHz), `mark` echoes and `stop`, collecting what Parley sends back.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFile, rm } from "node:fs/promises";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { getExpectedTwilioSignature } from "twilio/lib/webhooks/webhooks.js";
import WebSocket from "ws";
import { decodeMulaw, encodeMulaw } from "../../../src/providers/voice/twilio/mulaw.js";
import { decodeWav } from "../../../src/providers/voice/wav.js";

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

/** The `<Stream url>` and its `token` parameter from a call's TwiML. */
export function streamOf(twiml: string): { url: string; token: string } {
  const url = /<Stream url="([^"]+)"/.exec(twiml)?.[1];
  const token = /<Parameter name="token" value="([^"]+)"/.exec(twiml)?.[1];
  if (!url || !token) throw new Error(`no Stream in ${twiml}`);
  return { url: url.replace(/&amp;/g, "&"), token: token.replace(/&amp;/g, "&") };
}

/** Speech made by eSpeak NG (the Debian package's command line), as Twilio carries it: μ-law at 8 kHz. */
export async function espeakMulaw(text: string): Promise<Uint8Array> {
  const file = path.join(tmpdir(), `parley-twilio-${randomBytes(6).toString("hex")}.wav`);
  try {
    await promisify(execFile)("espeak-ng", ["-v", "en-us", "-s", "170", "-w", file, text]);
    const wav = decodeWav(await readFile(file));
    const ratio = wav.sampleRate / 8000;
    const samples = new Int16Array(Math.floor(wav.samples.length / ratio));
    for (let i = 0; i < samples.length; i++) samples[i] = wav.samples[Math.floor(i * ratio)] ?? 0;
    return encodeMulaw(samples);
  } finally {
    await rm(file, { force: true });
  }
}

export interface OutboundFrame {
  event: string;
  streamSid?: string;
  media?: { payload: string };
  mark?: { name: string };
}

/** Twilio's end of a bidirectional media stream. */
export class TwilioStream {
  readonly received: OutboundFrame[] = [];
  closed: { code: number; reason: string } | undefined;
  readonly streamSid = sid("MZ");
  private sequence = 0;
  private timestampMs = 0;
  private constructor(
    private readonly socket: WebSocket,
    private readonly echoMarks: boolean,
  ) {
    socket.on("message", (data) => {
      const frame = JSON.parse(String(data)) as OutboundFrame;
      this.received.push(frame);
      if (frame.event === "mark" && this.echoMarks) this.send({ event: "mark", streamSid: this.streamSid, mark: frame.mark });
    });
    socket.on("close", (code, reason) => {
      this.closed = { code, reason: reason.toString() };
    });
  }

  static open(url: string, options: { echoMarks: boolean }): Promise<TwilioStream> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url);
      const stream = new TwilioStream(socket, options.echoMarks);
      socket.once("open", () => resolve(stream));
      socket.once("error", reject);
    });
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

  /** Sends the caller's audio in Twilio's 20 ms frames, with Twilio's timestamps (ms from the stream's start). */
  async speak(mulaw: Uint8Array, options: { realTime: boolean } = { realTime: false }): Promise<void> {
    for (let offset = 0; offset < mulaw.length; offset += 160) {
      this.send({
        event: "media",
        sequenceNumber: String(++this.sequence),
        media: { track: "inbound", chunk: String(this.sequence), timestamp: String(this.timestampMs), payload: Buffer.from(mulaw.subarray(offset, offset + 160)).toString("base64") },
        streamSid: this.streamSid,
      });
      this.timestampMs += 20;
      if (options.realTime) await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  stop(accountSid: string, callSid: string): void {
    this.send({ event: "stop", sequenceNumber: String(++this.sequence), streamSid: this.streamSid, stop: { accountSid, callSid } });
  }

  /** The agent's audio Parley sent, decoded. */
  outboundAudio(): Int16Array {
    const bytes = Buffer.concat(this.received.filter((frame) => frame.event === "media" && frame.media).map((frame) => Buffer.from(frame.media!.payload, "base64")));
    return decodeMulaw(bytes);
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
