import fastifyWebsocket from "@fastify/websocket";
import { Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from "fastify";
import type { RawData, WebSocket } from "ws";
import type { CallService } from "../domain/calls.js";
import { assertThreadAccess, type Authenticator } from "../domain/credentials.js";
import { NotFoundError, RequestValidationError } from "../domain/errors.js";
import type { EventsService } from "../domain/events.js";
import { containsNul, nulRefusal } from "../domain/storable-text.js";
import type { ThreadService } from "../domain/threads.js";
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
const windowMs = 10_000;
const maxTurnCharacters = 32_000;

const missingAuthorization: ValidationIssue = { type: "missing", loc: ["header", "authorization"], msg: "Field required", input: null };
// A seq past 2^53 cannot be told apart from its neighbours in a JavaScript number, and one past 2^63 fails the
// database's bigint: refused here, before the upgrade, rather than failing the socket's first read.
const EventsQuery = Type.Object({
  token: Type.Optional(Type.String({ maxLength: 4096 })),
  after: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
});
const JoinQuery = Type.Object({ token: Type.String({ maxLength: 4096 }), audio: Type.Boolean({ default: false }) });
const ThreadPath = Type.Object({ thread_id: Type.String({ maxLength: 200 }) });
const CallPath = Type.Object({ call_id: Type.String({ maxLength: 200 }) });

type Schema = Parameters<typeof validatePart>[0];

/** The path's and the query's parameters, their issues reported together as FastAPI does; the query's value. */
function validated<T>(path: [Schema, unknown], query: [Schema, unknown]): T {
  const params = validatePart(path[0], path[1], "path");
  const { value, issues } = validatePart(query[0], query[1], "query");
  if (params.issues.length + issues.length > 0) throw new RequestValidationError([...params.issues, ...issues]);
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
      socket.close(1008, bytes > limits.bytes ? tooLarge : "too many messages");
      return false;
    }
    return true;
  };
}

const tooLarge = "message too large";

/**
 * `ws` refuses a frame over `maxPayload` itself, as soon as its header announces the length, and closes with 1009.
 * Parley's documented code for every frame over a limit is 1008, whichever layer notices, so the socket's close
 * is given that code for this one case.
 */
function closeOversizeWith1008(socket: WebSocket): void {
  const close = socket.close.bind(socket);
  socket.close = (code?: number, reason?: string | Buffer) => (code === 1009 ? close(1008, tooLarge) : close(code, reason));
}

/**
 * Errors on an open socket: `ws` reports a client's protocol violations (oversize or malformed frames, codes
 * `WS_ERR_…`) after it has begun closing with the right code; those are the client's fault and logged at warn.
 */
function onSocketError(error: Error & { code?: unknown }, socket: WebSocket, request: FastifyRequest): void {
  if (typeof error.code === "string" && error.code.startsWith("WS_ERR_")) {
    request.log.warn({ code: error.code, reason: error.message }, "a WebSocket client broke the protocol");
    return;
  }
  request.log.error({ err: error }, "WebSocket failed");
  socket.terminate();
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
  if (type === "hangup") return { type: "hangup" };
  if (type !== "user_message") return 'type must be "user_message" or "hangup"';
  if (containsNul(turn)) return nulRefusal;
  if (typeof turn !== "string" || turn.trim() === "" || turn.length > maxTurnCharacters) return `text must be 1 to ${maxTurnCharacters} characters`;
  return { type: "user_message", text: turn };
}

/**
 * The two WebSockets: a thread's events (`GET /threads/{thread_id}/events`) and a web call's own socket
 * (`GET /calls/{call_id}/ws?token=…`). Credentials are checked before the upgrade, so a refused client gets the
 * usual HTTP status and body.
 */
export function socketRoutes(options: SocketRoutesOptions): FastifyPluginAsync {
  return async (app: FastifyInstance) => {
    await app.register(fastifyWebsocket, { options: { maxPayload: maxFrameBytes }, errorHandler: onSocketError });
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
          const query = validated<{ token?: string; after?: number }>([ThreadPath, request.params], [EventsQuery, request.query]);
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
        closeOversizeWith1008(socket);
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
          .subscribe(
            access.threadId,
            access.after,
            (event) => {
              if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(event));
            },
            // The client reconnects with ?after= its last seq and misses nothing; a mute socket would never know.
            () => socket.close(1011, "reading events failed"),
          )
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
          const query = validated<{ token: string; audio: boolean }>([CallPath, request.params], [JoinQuery, request.query]);
          joins.set(request, { call: await options.calls.authorizeJoin(request.params.call_id, query.token), audio: query.audio });
        },
      },
      (socket, request) => {
        const join = joins.get(request);
        if (!join) return socket.close(1011, "not authorized");
        closeOversizeWith1008(socket);
        const connection = options.calls.join(
          join.call,
          {
            send: (message) => {
              if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(message));
            },
            close: (code, reason) => socket.close(code, reason),
          },
          { audio: join.audio },
        );
        const allow = guard(socket, options.pingMs, callInbound, () => undefined);
        socket.on("message", (data: RawData, isBinary: boolean) => {
          const bytes = bytesOf(data);
          if (!allow(bytes.length)) return;
          const message = isBinary ? "frames must be text" : parseTurn(bytes.toString());
          if (typeof message === "string") socket.send(JSON.stringify({ type: "error", detail: message }));
          else connection.receive(message);
        });
        socket.on("close", () => connection.disconnected());
      },
    );
  };
}
