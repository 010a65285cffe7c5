import fastifyWebsocket from "@fastify/websocket";
import type { FastifyInstance, FastifyPluginAsync } from "fastify";
import { registerCallSocket, type CallSocketOptions } from "./call-socket-routes.js";
import { registerEventsSocket, type EventsSocketOptions } from "./events-routes.js";
import { maxFrameBytes, onSocketError } from "./socket-support.js";

/** The WebSockets: a thread's events and a web call's own socket. */
export function socketRoutes(options: EventsSocketOptions & CallSocketOptions): FastifyPluginAsync {
  return async (app: FastifyInstance) => {
    await app.register(fastifyWebsocket, { options: { maxPayload: maxFrameBytes }, errorHandler: onSocketError });
    registerEventsSocket(app, options);
    registerCallSocket(app, options);
  };
}
