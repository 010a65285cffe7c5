import fastifyWebsocket from "@fastify/websocket";
import type { FastifyInstance, FastifyPluginAsync } from "fastify";
import type { WebSocket } from "ws";
import type { AccessChecks } from "./access.js";
import { callSocket, type CallSocketOptions } from "./call-socket-routes.js";
import { eventsSocket, type EventsSocketOptions } from "./events-routes.js";
import { registerSocket } from "./socket.js";
import { closeOversizeWith1008, maxFrameBytes, onSocketError } from "./socket-support.js";
import { telephonyRoutes, type TelephonyRoutesOptions } from "./telephony-routes.js";

export interface SocketRoutesOptions extends EventsSocketOptions, CallSocketOptions {
  telephony: TelephonyRoutesOptions;
}

/**
 * Every WebSocket: a thread's events, a web call's own socket, and the telephony vendors' (with their webhooks). One
 * registration of @fastify/websocket serves them all, so every socket has the same frame limit, close code and error
 * logging. Each registration listens to the server's `upgrade` event and routes the request itself: with a second
 * one, every upgrade was routed twice, and the second found the socket taken ("websocket upgrade failed: ServerResponse
 * has an already assigned socket", logged at warn on every upgrade; issue 21).
 */
export function socketRoutes(checks: AccessChecks, options: SocketRoutesOptions): FastifyPluginAsync {
  return async (app: FastifyInstance) => {
    await app.register(fastifyWebsocket, { options: { maxPayload: maxFrameBytes }, errorHandler: onSocketError });
    // Before the socket reads a byte: a frame over the limit is refused as its header arrives, authenticated or not.
    app.websocketServer.on("connection", (socket: WebSocket) => closeOversizeWith1008(socket));
    for (const socket of [eventsSocket(options), callSocket(options)]) registerSocket(app, socket, checks);
    await app.register(telephonyRoutes(checks, options.telephony));
  };
}
