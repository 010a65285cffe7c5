import type { FastifyReply } from "fastify";
import { mapError } from "./error-mapper.js";

/**
 * Writes a streamed reply as NDJSON (or SSE when the client asked for text/event-stream). Headers go out with the
 * first token, so that a failure before any token is still an ordinary JSON error with its status code. Writes to a
 * client that went away are dropped: the turn goes on and its reply is stored.
 */
export class ChatStream {
  private index = 0;
  private started = false;
  private clientGone = false;

  constructor(
    private readonly reply: FastifyReply,
    private readonly sse: boolean,
  ) {}

  get hasStarted(): boolean {
    return this.started;
  }

  /** `extra` adds fields after token and index (a simulation's `turn`). */
  token(token: string, extra?: Record<string, unknown>): void {
    this.write("token", extra ? { token, index: this.index, ...extra } : { token, index: this.index });
    this.index += 1;
  }

  finish(final: unknown): void {
    this.write("message", final);
    this.end();
  }

  fail(error: unknown): void {
    const mapped = mapError(error);
    const body = mapped.body as { detail?: unknown };
    this.write("error", { error: typeof body.detail === "string" ? body.detail : "Internal Server Error", status_code: mapped.status });
    this.end();
  }

  private write(event: string, data: unknown): void {
    if (!this.started) this.start();
    const raw = this.reply.raw;
    if (raw.destroyed || raw.writableEnded) return;
    const json = JSON.stringify(data);
    // Lines written in one go (the tokens held back until the user's message was durable, or those of one chunk from
    // the model) leave in one write of the socket.
    if (raw.writableCorked === 0) {
      raw.cork();
      process.nextTick(() => raw.uncork());
    }
    raw.write(this.sse ? `event: ${event}\ndata: ${json}\n\n` : `${json}\n`);
  }

  private start(): void {
    this.started = true;
    this.reply.hijack();
    const raw = this.reply.raw;
    raw.statusCode = 200;
    // A hijacked reply no longer sends the headers the hooks set (the request id, and CORS, without which a page on
    // another origin cannot read the stream): they go out here.
    for (const [name, value] of Object.entries(this.reply.getHeaders())) if (value !== undefined) raw.setHeader(name, value);
    raw.setHeader("content-type", this.sse ? "text/event-stream; charset=utf-8" : "application/x-ndjson");
    raw.setHeader("cache-control", "no-cache");
    raw.setHeader("x-accel-buffering", "no");
    // The client hanging up half-closes the socket; it is destroyed at the end so it does not linger as keep-alive.
    raw.socket?.once("end", this.markClientGone);
  }

  private readonly markClientGone = (): void => {
    this.clientGone = true;
  };

  private end(): void {
    const raw = this.reply.raw;
    // A keep-alive socket serves many streams: each must take its listener away again, or they pile up.
    raw.socket?.off("end", this.markClientGone);
    if (this.clientGone) raw.destroy();
    else if (!raw.destroyed && !raw.writableEnded) raw.end();
  }
}

export function wantsEventStream(accept: string | undefined): boolean {
  return accept !== undefined && /\btext\/event-stream\b/i.test(accept);
}
