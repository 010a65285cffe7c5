import type { CallSummaryView } from "../../src/domain/calls/call-views.js";
import WebSocket from "ws";
import type { App } from "../../src/app.js";
import type { VoiceSettings } from "../../src/domain/calls/voice-settings.js";
import type { TestDatabase } from "../support/databases.js";
import { acmeAgent } from "../support/fixtures.js";
import type { Harness, HarnessOptions } from "../support/harness.js";
import { pollUntil } from "../support/polling.js";

export const accountId = "6f1f6c43-3b8f-4d9e-9a57-2f0c4f1b7a01";
export const secondAccountId = "0b4f9a52-7c1e-4d0a-8f3e-9d2b6c5a4e02";

export const voiceConfig = {
  agent: acmeAgent,
  pricing: { voice_minute_usd: 0.06 },
  voice: {
    accounts: [{ id: accountId, phone_numbers: ["+14155550100"] }],
    analysis_fields: [{ name: "asked_about_hours", type: "boolean", description: "Did the caller ask about opening hours?" }],
    simulated: { script: ["Hello?", "What are your opening hours?", "Great, thanks. Bye."], ring_ms: 20, turn_ms: 30 },
  },
};

/** Short timings so that web-call expiry and sweeps happen within a test. */
export const testVoiceSettings: Partial<VoiceSettings> = { webCallJoinTimeoutMs: 300, heartbeatMs: 200, schedulerPollSeconds: 0.5, speechMode: "text" };

/** The settings of suites that run calls with real audio through the speech pipeline. */
export const audioVoiceSettings: Partial<VoiceSettings> = { ...testVoiceSettings, webCallJoinTimeoutMs: 10_000, speechMode: "audio" };

/** The harness options of the call suites: short timings, and a project with the voice configuration above. */
export function voiceSuite(options: { voice?: Partial<VoiceSettings>; only?: TestDatabase["name"] } = {}): HarnessOptions {
  return { voice: options.voice ?? testVoiceSettings, projectConfig: voiceConfig, ...(options.only ? { only: options.only } : {}) };
}

/** The call detail as the interface returns it, with the parts the tests read typed. */
export interface CallDetail extends CallSummaryView {
  transcript: string | null;
  transcript_object: { role: string; content: string; words: { word: string; start: number; end: number }[] }[] | null;
  recording_url: string | null;
  call_analysis: { call_summary: string; user_sentiment: string; call_successful: boolean | null; custom_analysis_data: Record<string, unknown> } | null;
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls the call until `done` holds (or fails after `timeoutMs`). */
export async function waitForCall(
  request: Harness["request"],
  apiKey: string,
  callId: string,
  done: (call: CallDetail) => boolean,
  timeoutMs = 15_000,
): Promise<CallDetail> {
  const read = async () => (await request({ method: "GET", url: `/calls/${callId}`, headers: { authorization: apiKey } })).json<CallDetail>();
  return pollUntil(read, done, { what: `call ${callId}`, timeoutMs, intervalMs: 50 });
}

export const processed = (call: CallDetail) => (call.status === "ended" || call.status === "error") && call.call_analysis !== null;

/** A WebSocket client that queues what it receives, for tests that wait for a given message. */
export class TestSocket {
  readonly received: Record<string, unknown>[] = [];
  private waiters: (() => void)[] = [];
  closed: { code: number; reason: string } | undefined;
  /** Binary frames received: a web call's agent speech (16 kHz PCM). */
  audioFrames = 0;

  private constructor(readonly socket: WebSocket) {
    socket.on("message", (data, isBinary) => {
      if (isBinary) this.audioFrames += 1;
      else this.received.push(JSON.parse(String(data)) as Record<string, unknown>);
      this.wake();
    });
    socket.on("close", (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      this.wake();
    });
  }

  /** Opens a socket; a refused upgrade rejects with the HTTP status and body. */
  static open(url: string, headers: Record<string, string> = {}): Promise<TestSocket> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(url, { headers });
      socket.once("open", () => resolve(new TestSocket(socket)));
      socket.once("unexpected-response", (_request, response) => {
        let body = "";
        response.on("data", (chunk: Buffer) => (body += chunk.toString()));
        response.on("end", () => reject(Object.assign(new Error(`upgrade refused: ${response.statusCode}`), { status: response.statusCode, body })));
      });
      socket.once("error", reject);
    });
  }

  send(message: unknown): void {
    this.socket.send(JSON.stringify(message));
  }

  /** A binary frame: the caller's microphone, 16 kHz 16-bit little-endian mono PCM. */
  sendAudio(samples: Int16Array): void {
    this.socket.send(Buffer.from(samples.buffer, samples.byteOffset, samples.byteLength));
  }

  /** The first received message (not yet taken) that matches, waiting for it. */
  async next(matches: (message: Record<string, unknown>) => boolean, timeoutMs = 10_000): Promise<Record<string, unknown>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const index = this.received.findIndex(matches);
      if (index >= 0) return this.received.splice(index, 1)[0]!;
      if (this.closed) throw new Error(`socket closed (${this.closed.code}) while waiting; received ${JSON.stringify(this.received)}`);
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new Error(`timed out; received ${JSON.stringify(this.received)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, remaining);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  async waitClosed(timeoutMs = 5_000): Promise<{ code: number; reason: string }> {
    const deadline = Date.now() + timeoutMs;
    while (!this.closed) {
      if (Date.now() > deadline) throw new Error("socket did not close");
      await sleep(20);
    }
    return this.closed;
  }

  close(): void {
    this.socket.close();
  }

  private wake(): void {
    for (const waiter of this.waiters.splice(0)) waiter();
  }
}

/** Starts the app's server on a free local port for WebSocket tests; returns its ws:// base. */
export async function listen(app: App): Promise<string> {
  const address = await app.server.listen({ port: 0, host: "127.0.0.1" });
  return address.replace(/^http/, "ws");
}
