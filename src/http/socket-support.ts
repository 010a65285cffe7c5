import type { FastifyRequest } from "fastify";
import type { RawData, WebSocket } from "ws";
import { NotFoundError, RequestValidationError } from "../domain/shared/errors.js";
import { validatePart } from "./validation/validator.js";

/** The largest frame any Parley socket accepts; `ws` refuses a larger one before it is buffered. */
export const maxFrameBytes = 64 * 1024;
const windowMs = 10_000;

export function validatedQuery<T>(schema: Parameters<typeof validatePart>[0], raw: unknown): T {
  const { value, issues } = validatePart(schema, raw, "query");
  if (issues.length > 0) throw new RequestValidationError(issues);
  return value as T;
}

/** A plain HTTP request matches no WebSocket route, as in Starlette: 404 before any credential is looked at. */
export function rejectPlainHttp(request: FastifyRequest): void {
  if (!request.ws) throw new NotFoundError("Not Found");
}

/**
 * Pings the client every `pingMs` and drops one that did not answer the previous ping; closes the socket (1008)
 * when its client sends too much or too often. Returns the check each inbound frame must pass.
 */
export function guard(socket: WebSocket, pingMs: number, limits: { bytes: number; perWindow: number }, onBeat: () => void): (bytes: number) => boolean {
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
  let windowStart = Date.now();
  let count = 0;
  return (bytes) => {
    const now = Date.now();
    if (now - windowStart > windowMs) {
      windowStart = now;
      count = 0;
    }
    count += 1;
    if (bytes > limits.bytes || count > limits.perWindow) {
      socket.close(1008, bytes > limits.bytes ? "message too large" : "too many messages");
      return false;
    }
    return true;
  };
}

/** A frame's bytes: `ws` hands over one Buffer unless a socket's binaryType was changed, which Parley never does. */
export function bytesOf(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  return Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
}
