import fastifyWebsocket from "@fastify/websocket";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from "fastify";
import type { RawData, WebSocket } from "ws";
import type { CallService } from "../domain/calls.js";
import { assertThreadAccess, type Authenticator } from "../domain/credentials.js";
import { NotFoundError, RequestValidationError } from "../domain/errors.js";
import type { EventsService } from "../domain/events.js";
import type { ThreadService } from "../domain/threads.js";
import { pcmFromBytes } from "../providers/speech/audio.js";
import type { ProviderCall, WebCallClientMessage } from "../providers/voice/types.js";
import type { ValidationIssue } from "./validation/issues.js";
import { validatePart } from "./validation/validator.js";

export interface SocketRoutesOptions {
  authenticator: Authenticator;
  threads: ThreadService;
  events: EventsService;
  calls: CallService;
  pingMs: number;
}

/** Inbound limits: the events socket expects next to nothing from its client, a web call one message per turn. */
const maxFrameBytes = 64 * 1024;
const eventsInbound = { bytes: 1024, perWindow: 20 };
const callInbound = { bytes: 64 * 1024, perWindow: 40 };
/** Microphone audio: 16 kHz PCM is 32 KB a second, in frames of 20 ms or more (the widget sends 100 ms). */
const callAudioInbound = { bytes: 64 * 1024, perWindow: 600 };
const windowMs = 10_000;

/** Counts frames per window; false for a frame over the size limit or beyond the window's allowance. */
function frameWindow(limits: { bytes: number; perWindow: number }): (bytes: number) => boolean {
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
const maxTurnCharacters = 32_000;

const missingAuthorization: ValidationIssue = { type: "missing", loc: ["header", "authorization"], msg: "Field required", input: null };
const EventsQuery = Type.Object({ token: Type.Optional(Type.String({ maxLength: 4096 })), after: Type.Optional(Type.Integer({ minimum: 0 })) });
const JoinQuery = Type.Object({ token: Type.String({ maxLength: 4096 }), audio: Type.Boolean({ default: false }) });

function validated<T>(schema: Parameters<typeof validatePart>[0], raw: unknown): T {
  const { value, issues } = validatePart(schema, raw, "query");
  if (issues.length > 0) throw new RequestValidationError(issues);
  return value as T;
}

/** A plain HTTP request matches no WebSocket route, as in Starlette: 404 before any credential is looked at. */
function rejectPlainHttp(request: FastifyRequest): void {
  if (!request.ws) throw new NotFoundError("Not Found");
}

/**
 * Pings the client every `pingMs` and drops one that did not answer the previous ping; closes the socket (1008)
 * when its client sends too much or too often. Returns the check each inbound frame must pass.
 */
function guard(socket: WebSocket, pingMs: number, limits: { bytes: number; perWindow: number }, onBeat: () => void): (bytes: number) => boolean {
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
function bytesOf(data: RawData): Buffer {
  if (Buffer.isBuffer(data)) return data;
  return Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
}

function parseTurn(text: string): WebCallClientMessage | string {
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return "frames must be JSON objects";
  }
  if (typeof message !== "object" || message === null) return "frames must be JSON objects";
  const { type, text: turn } = message as { type?: unknown; text?: unknown };
  if (type === "hangup" || type === "end") return { type: "hangup" };
  if (type !== "text" && type !== "user_message") return 'type must be "text", "user_message" or "hangup"';
  if (typeof turn !== "string" || turn.trim() === "" || turn.length > maxTurnCharacters) return `text must be 1 to ${maxTurnCharacters} characters`;
  // PostgreSQL cannot store U+0000: refused here, so that the call goes on rather than failing to record the turn.
  if (turn.includes("\u0000")) return "Text must not contain NUL (U+0000) characters";
  return { type: "text", text: turn };
}

/**
 * The two WebSockets: a thread's events (`GET /threads/{thread_id}/events`) and a web call's own socket
 * (`GET /calls/{call_id}/ws?token=…`). Credentials are checked before the upgrade, so a refused client gets the
 * usual HTTP status and body.
 */
export function socketRoutes(options: SocketRoutesOptions): FastifyPluginAsync {
  return async (app: FastifyInstance) => {
    await app.register(fastifyWebsocket, { options: { maxPayload: maxFrameBytes } });
    const eventsAccess = new WeakMap<FastifyRequest, { threadId: string; after: number | undefined }>();
    const joins = new WeakMap<FastifyRequest, { call: ProviderCall; audio: boolean }>();

    app.get<{ Params: { thread_id: string } }>(
      "/threads/:thread_id/events",
      {
        websocket: true,
        // The access log would carry the URL, and with it a `token` parameter: these routes log warnings only.
        logLevel: "warn",
        preValidation: async (request) => {
          rejectPlainHttp(request);
          const query = validated<{ token?: string; after?: number }>(EventsQuery, request.query);
          const credential = request.headers.authorization ?? query.token;
          if (credential === undefined) throw new RequestValidationError([missingAuthorization]);
          const caller = await options.authenticator.caller(credential, true);
          assertThreadAccess(caller, request.params.thread_id);
          const thread = await options.threads.get(caller.organizationId, request.params.thread_id);
          eventsAccess.set(request, { threadId: thread.id, after: query.after });
        },
      },
      (socket, request) => {
        const access = eventsAccess.get(request);
        if (!access) return socket.close(1011, "not authorized");
        let subscription: { close(): void; poke(): void } | undefined;
        let closed = false;
        const allow = guard(socket, options.pingMs, eventsInbound, () => subscription?.poke());
        socket.on("message", (data: RawData, isBinary: boolean) => {
          const bytes = bytesOf(data);
          if (!allow(bytes.length) || isBinary) return;
          if (bytes.toString() === '{"type":"ping"}') socket.send('{"type":"pong"}');
        });
        socket.on("close", () => {
          closed = true;
          subscription?.close();
        });
        void options.events
          .subscribe(access.threadId, access.after, (event) => {
            if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(event));
          })
          .then((opened) => {
            subscription = opened;
            if (closed) opened.close();
          })
          .catch((error: unknown) => {
            request.log.error({ err: error }, "subscribing to thread events failed");
            socket.close(1011, "internal error");
          });
      },
    );

    app.get<{ Params: { call_id: string } }>(
      "/calls/:call_id/ws",
      {
        websocket: true,
        logLevel: "warn",
        preValidation: async (request) => {
          rejectPlainHttp(request);
          const query = validated<{ token: string; audio: boolean }>(JoinQuery, request.query);
          joins.set(request, { call: await options.calls.authorizeJoin(request.params.call_id, query.token), audio: query.audio });
        },
      },
      (socket, request) => {
        const join = joins.get(request);
        if (!join) return socket.close(1011, "not authorized");
        const connection = options.calls.join(
          join.call,
          {
            send: (message) => {
              if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(message));
            },
            sendAudio: (pcm) => {
              if (socket.readyState === socket.OPEN) socket.send(pcm, { binary: true });
            },
            close: (code, reason) => socket.close(code, reason),
          },
          { audio: join.audio },
        );
        const allow = guard(socket, options.pingMs, callInbound, () => undefined);
        const allowAudio = frameWindow(callAudioInbound);
        socket.on("message", (data: RawData, isBinary: boolean) => {
          const bytes = bytesOf(data);
          if (isBinary) {
            if (!allowAudio(bytes.length)) socket.close(1008, bytes.length > callAudioInbound.bytes ? "message too large" : "too many messages");
            else connection.receiveAudio(pcmFromBytes(bytes));
            return;
          }
          if (!allow(bytes.length)) return;
          const message = parseTurn(bytes.toString());
          if (typeof message === "string") socket.send(JSON.stringify({ type: "error", detail: message }));
          else connection.receive(message);
        });
        socket.on("close", () => connection.disconnected());
      },
    );
  };
}
