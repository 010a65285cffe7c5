import type { FastifyRequest } from "fastify";
import type { RawData, WebSocket } from "ws";
import { NotFoundError } from "../domain/shared/errors.js";

/** The largest frame any Parley socket accepts; `ws` refuses a larger one before it is buffered. */
export const maxFrameBytes = 64 * 1024;
const windowMs = 10_000;

/** A plain HTTP request matches no WebSocket route, as in Starlette: 404 before any credential is looked at. */
export function rejectPlainHttp(request: FastifyRequest): void {
  if (!request.ws) throw new NotFoundError("Not Found");
}

/** How much a socket's client may send: frames of `bytes` at most, `perWindow` of them every ten seconds. */
export interface FrameLimits {
  bytes: number;
  perWindow: number;
}

/** Counts frames per window; false for a frame over the size limit or beyond the window's allowance. */
export function frameWindow(limits: FrameLimits): (bytes: number) => boolean {
  let windowStart = Date.now();
  let count = 0;
  return (bytes) => {
    const now = Date.now();
    if (now - windowStart > windowMs) {
      windowStart = now;
      count = 0;
    }
    count += 1;
    return bytes <= limits.bytes && count <= limits.perWindow;
  };
}

/**
 * Pings the client every `pingMs` and drops one that did not answer the previous ping; closes the socket (1008)
 * when its client sends too much or too often. Returns the check each inbound frame must pass.
 */
export function guard(socket: WebSocket, pingMs: number, limits: FrameLimits, onBeat: () => void): (bytes: number) => boolean {
  let alive = true;
  socket.on("pong", () => {
    alive = true;
  });
  const pinger = setInterval(() => {
    if (!alive) {
      socket.terminate();
      return;
    }
    alive = false;
    socket.ping();
    onBeat();
  }, pingMs);
  socket.on("close", () => clearInterval(pinger));
  const allowed = frameWindow(limits);
  return (bytes) => {
    if (allowed(bytes)) return true;
    socket.close(1008, bytes > limits.bytes ? tooLarge : "too many messages");
    return false;
  };
}

const tooLarge = "message too large";

/**
 * `ws` refuses a frame over `maxPayload` itself, as soon as its header announces the length, and closes with 1009.
 * Parley's documented code for every frame over a limit is 1008, whichever layer notices, so the socket's close
 * is given that code for this one case.
 */
export function closeOversizeWith1008(socket: WebSocket): void {
  const close = socket.close.bind(socket);
  socket.close = (code?: number, reason?: string | Buffer) => (code === 1009 ? close(1008, tooLarge) : close(code, reason));
}

/**
 * Errors on an open socket: `ws` reports a client's protocol violations (oversize or malformed frames, codes
 * `WS_ERR_…`) after it has begun closing with the right code; those are the client's fault and logged at warn.
 */
export function onSocketError(error: Error & { code?: unknown }, socket: WebSocket, request: FastifyRequest): void {
  if (typeof error.code === "string" && error.code.startsWith("WS_ERR_")) {
    request.log.warn({ code: error.code, reason: error.message }, "a WebSocket client broke the protocol");
    return;
  }
  request.log.error({ err: error }, "WebSocket failed");
  socket.terminate();
}

/** A frame's bytes: `ws` hands over one Buffer unless a socket's binaryType was changed, which Parley never does. */
export function bytesOf(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  return Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
}
