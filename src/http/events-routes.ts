import { Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { RawData } from "ws";
import type { Authenticator } from "../domain/access/credentials.js";
import type { EventsService } from "../domain/events/events-service.js";
import { RequestValidationError } from "../domain/shared/errors.js";
import type { ThreadService } from "../domain/threads/thread-service.js";
import { bytesOf, guard, rejectPlainHttp, validatedPathAndQuery } from "./socket-support.js";
import { enforceThreadScope } from "./thread-scope.js";
import { missingAuthorization } from "./validation/missing-authorization.js";

export interface EventsSocketOptions {
  authenticator: Authenticator;
  threads: ThreadService;
  events: EventsService;
  pingMs: number;
}

/** The events socket expects next to nothing from its client. */
const eventsInbound = { bytes: 1024, perWindow: 20 };
// A seq past 2^53 cannot be told apart from its neighbours in a JavaScript number, and one past 2^63 fails the
// database's bigint: refused here, before the upgrade, rather than failing the socket's first read.
const EventsQuery = Type.Object({
  token: Type.Optional(Type.String({ maxLength: 4096 })),
  after: Type.Optional(Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
});
const ThreadPath = Type.Object({ thread_id: Type.String({ maxLength: 200 }) });

/**
 * A thread's events (`GET /threads/{thread_id}/events`). Credentials are checked before the upgrade, so a refused
 * client gets the usual HTTP status and body.
 */
export function registerEventsSocket(app: FastifyInstance, options: EventsSocketOptions): void {
  const eventsAccess = new WeakMap<FastifyRequest, { threadId: string; after: number | undefined }>();
  app.get<{ Params: { thread_id: string } }>(
    "/threads/:thread_id/events",
    {
      websocket: true,
      config: { access: "thread" },
      // The access log would carry the URL, and with it a `token` parameter: these routes log warnings only.
      logLevel: "warn",
      preValidation: async (request) => {
        rejectPlainHttp(request);
        const query = validatedPathAndQuery<{ token?: string; after?: number }>([ThreadPath, request.params], [EventsQuery, request.query]);
        const credential = request.headers.authorization ?? query.token;
        if (credential === undefined) throw new RequestValidationError([missingAuthorization]);
        const caller = await options.authenticator.caller(credential, true);
        enforceThreadScope(caller, request.params.thread_id);
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
}
