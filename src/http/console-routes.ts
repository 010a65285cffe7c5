import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from "fastify";
import type { Asset, ConsoleAssets } from "../web/console-bundle.js";
import { favicon } from "../web/favicon.js";

/**
 * The console's pages are same-origin only: scripts and styles from Parley itself, API calls and the events socket
 * to it, recordings from wherever `recording_url` points (PUBLIC_BASE_URL may be another host).
 */
const contentSecurityPolicy = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "media-src 'self' https: http: blob:",
  "connect-src 'self' ws: wss:",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join("; ");

function send(request: FastifyRequest, reply: FastifyReply, asset: Asset): FastifyReply {
  reply.header("content-security-policy", contentSecurityPolicy).header("x-content-type-options", "nosniff").header("referrer-policy", "no-referrer");
  reply.header("cache-control", "no-cache").header("etag", asset.etag);
  if (request.headers["if-none-match"] === asset.etag) return reply.code(304).send();
  return reply.type(asset.contentType).send(asset.body);
}

/**
 * `GET /console` (the page), `/console/console.js`, `/console/console.css`, `/console/capture-worklet.js` (the
 * microphone's AudioWorklet, for the test call) and `/favicon.ico` (which browsers ask every
 * origin for, the console's and the docs' pages alike); not part of the OpenAPI document.
 */
export function consoleRoutes(assets: ConsoleAssets): FastifyPluginAsync {
  const icon = favicon();
  return async (app: FastifyInstance) => {
    const hidden = { schema: { hide: true } };
    app.get("/favicon.ico", hidden, async (_request, reply) => reply.type("image/x-icon").header("cache-control", "public, max-age=86400").send(icon));
    app.get("/console", hidden, async (request, reply) => send(request, reply, (await assets.get()).page));
    app.get("/console/console.js", hidden, async (request, reply) => send(request, reply, (await assets.get()).script));
    app.get("/console/console.css", hidden, async (request, reply) => send(request, reply, (await assets.get()).styles));
    app.get("/console/capture-worklet.js", hidden, async (request, reply) => send(request, reply, (await assets.get()).worklet));
  };
}
