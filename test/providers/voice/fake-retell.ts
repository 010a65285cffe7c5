/**
 * A fake Retell for tests and benchmarks, speaking Retell's documented protocols on loopback:
 * - its REST API (`POST /v2/create-phone-call`, `/v2/create-web-call`, `/v2/stop-call/{call_id}`, Bearer API key),
 *   recording what it received and answering as Retell does, or failing as told;
 * - the Retell side of a Custom LLM WebSocket (`RetellLlmClient`): it connects to Parley's socket for a call id and
 *   sends `call_details`, `ping_pong`, `update_only`, `response_required` and `reminder_required` frames;
 * - its webhooks, signed with retell-sdk's own `sign`.
 */
import { randomBytes } from "node:crypto";
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { sign } from "retell-sdk";
import WebSocket from "ws";

export interface RetellRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  json: Record<string, unknown> | undefined;
}

export type RetellBehaviour = { kind: "ok" } | { kind: "status"; status: number } | { kind: "hang" };

export interface FakeRetell {
  url: string;
  requests: RetellRequest[];
  /** Ids of the calls it created, in order. */
  callIds: string[];
  behave(behaviour: RetellBehaviour): void;
  /** Runs before create-phone-call is answered, with the new call's id and the request: Retell racing its own answer. */
  beforeAnswer(hook: ((callId: string, body: Record<string, unknown> | undefined) => Promise<void>) | undefined): void;
  close(): Promise<void>;
}

export function retellCallId(): string {
  return `call_${randomBytes(16).toString("hex")}`;
}

export async function startFakeRetell(apiKey: string): Promise<FakeRetell> {
  const requests: RetellRequest[] = [];
  const callIds: string[] = [];
  let behaviour: RetellBehaviour = { kind: "ok" };
  let hook: ((callId: string, body: Record<string, unknown> | undefined) => Promise<void>) | undefined;
  const server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString()));
    request.on("end", () => {
      let json: Record<string, unknown> | undefined;
      try {
        json = body ? (JSON.parse(body) as Record<string, unknown>) : undefined;
      } catch {
        json = undefined;
      }
      const path = request.url ?? "";
      requests.push({ method: request.method ?? "", path, headers: request.headers, json });
      const answer = (status: number, payload?: unknown) => {
        response.writeHead(status, payload === undefined ? {} : { "content-type": "application/json" });
        response.end(payload === undefined ? undefined : JSON.stringify(payload));
      };
      if (behaviour.kind === "hang") return;
      if (behaviour.kind === "status") return answer(behaviour.status, { status: "error", message: "Internal server error, please retry." });
      if (request.headers.authorization !== `Bearer ${apiKey}`) return answer(401, { status: "error", message: "API key is invalid." });
      const callId = retellCallId();
      if (request.method === "POST" && path === "/v2/create-phone-call") {
        callIds.push(callId);
        const answerCall = () =>
          answer(201, {
          call_id: callId,
          call_type: "phone_call",
          agent_id: json?.["override_agent_id"],
          call_status: "registered",
          from_number: json?.["from_number"],
          to_number: json?.["to_number"],
          direction: "outbound",
          metadata: json?.["metadata"],
        });
        if (!hook) return answerCall();
        void hook(callId, json).finally(answerCall);
        return;
      }
      if (request.method === "POST" && path === "/v2/create-web-call") {
        callIds.push(callId);
        return answer(201, {
          call_id: callId,
          call_type: "web_call",
          agent_id: json?.["agent_id"],
          call_status: "registered",
          access_token: `eyJhbGciOiJIUzI1NiJ9.${randomBytes(24).toString("base64url")}`,
          metadata: json?.["metadata"],
        });
      }
      if (request.method === "POST" && path.startsWith("/v2/stop-call/")) return answer(204);
      return answer(404, { status: "error", message: "Not found" });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    callIds,
    behave(next) {
      behaviour = next;
    },
    beforeAnswer(next) {
      hook = next;
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A webhook body as Retell sends it, and its `x-retell-signature` made by retell-sdk's `sign`. */
export async function signedWebhook(apiKey: string, event: string, call: Record<string, unknown>): Promise<{ body: string; signature: string }> {
  const body = JSON.stringify({ event, call });
  return { body, signature: await sign(body, apiKey) };
}

export interface ResponseFrame {
  response_type: string;
  response_id?: number;
  content?: string;
  content_complete?: boolean;
  end_call?: boolean;
  transfer_number?: string;
  config?: Record<string, unknown>;
  timestamp?: number;
}

/** Retell's end of a Custom LLM WebSocket. */
export class RetellLlmClient {
  readonly frames: ResponseFrame[] = [];
  closed: { code: number; reason: string } | undefined;
  private waiters: (() => void)[] = [];

  private constructor(private readonly socket: WebSocket) {
    socket.on("message", (data) => {
      this.frames.push(JSON.parse(String(data)) as ResponseFrame);
      this.wake();
    });
    socket.on("close", (code, reason) => {
      this.closed = { code, reason: reason.toString() };
      this.wake();
    });
  }

  static connect(wsBase: string, retellCallId: string): Promise<RetellLlmClient> {
    return new Promise((resolve, reject) => {
      const socket = new WebSocket(`${wsBase}/voice/retell/llm/${retellCallId}`);
      const client = new RetellLlmClient(socket);
      socket.once("open", () => resolve(client));
      socket.once("error", reject);
    });
  }

  send(frame: Record<string, unknown>): void {
    this.socket.send(JSON.stringify(frame));
  }

  /** Waits until `done` holds of the frames received so far. */
  async until<T>(done: (frames: ResponseFrame[]) => T | undefined, timeoutMs = 10_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const result = done(this.frames);
      if (result !== undefined) return result;
      if (this.closed) throw new Error(`socket closed (${this.closed.code}) while waiting; frames ${JSON.stringify(this.frames)}`);
      const remaining = deadline - Date.now();
      if (remaining <= 0) throw new Error(`timed out; frames ${JSON.stringify(this.frames)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, remaining);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** The complete response to `responseId`: its text, whether it asks Retell to hang up, and where to transfer the call. */
  response(responseId: number, timeoutMs?: number): Promise<{ text: string; endCall: boolean; transferNumber: string | undefined; frames: ResponseFrame[] }> {
    return this.until((frames) => {
      const mine = frames.filter((frame) => frame.response_type === "response" && frame.response_id === responseId);
      const last = mine.at(-1);
      if (!last?.content_complete) return undefined;
      return { text: mine.map((frame) => frame.content ?? "").join(""), endCall: last.end_call === true, transferNumber: last.transfer_number, frames: mine };
    }, timeoutMs);
  }

  async waitClosed(timeoutMs = 5_000): Promise<{ code: number; reason: string }> {
    await this.until(() => undefined, timeoutMs).catch(() => undefined);
    if (!this.closed) throw new Error("socket did not close");
    return this.closed;
  }

  close(): void {
    this.socket.close();
  }

  private wake(): void {
    for (const waiter of this.waiters.splice(0)) waiter();
  }
}
