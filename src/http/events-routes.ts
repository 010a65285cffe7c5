import { Type } from "@sinclair/typebox";
import type { RawData } from "ws";
import type { EventsService } from "../domain/events/events-service.js";
import type { ThreadService } from "../domain/threads/thread-service.js";
import { defineSocket, type SocketDefinition } from "./socket.js";
import { bytesOf, guard } from "./socket-support.js";

export interface EventsSocketOptions {
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
export function eventsSocket(options: EventsSocketOptions): SocketDefinition {
  return defineSocket({
    url: "/threads/:thread_id/events",
    access: { thread: ({ params }) => params.thread_id },
    params: ThreadPath,
    query: EventsQuery,
    credentialParameter: "token",
    resource: ({ caller, params }) => options.threads.get(caller.organizationId, params.thread_id),
    open: (socket, { resource: thread, query, request }) => {
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
          thread.id,
          query.after,
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
  });
}
