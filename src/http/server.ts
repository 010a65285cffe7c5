import fastifySwagger from "@fastify/swagger";
import fastifySwaggerUi from "@fastify/swagger-ui";
import { Type } from "@sinclair/typebox";
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyRequest } from "fastify";
import FindMyWay from "find-my-way";
import { createServer, STATUS_CODES, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import type { Duplex } from "node:stream";
import type { Authenticator, Caller } from "../domain/access/credentials.js";
import type { RateLimits } from "../domain/access/rate-limits.js";
import { accessKindOf, enforceAccess, signedWebhookOf, takesCaller, type AccessChecks, type AccessKind } from "./access.js";
import { RequestValidationError } from "../domain/shared/errors.js";
import { containsNul } from "../domain/shared/storable-text.js";
import { mapError, type ErrorBodyShape } from "./error-mapper.js";
import { MalformedBodyError, UnstorableTextError } from "./http-errors.js";
import { openapiExtensions } from "./openapi-extensions.js";
import type { HttpMetrics } from "./metrics.js";
import { LazyRequestLogger } from "./request-logger.js";
import type { RequestLines } from "./request-line.js";
import type { RouteDefinition } from "./route.js";
import type { ValidationIssue } from "../domain/shared/validation-issue.js";
import { parsePythonJson } from "./validation/python-json.js";
import { missingAuthorization } from "./validation/missing-authorization.js";
import { jsonInvalidIssue, validatePart } from "./validation/validator.js";
import { uuidv4 } from "../domain/shared/ids.js";

export interface ServerOptions {
  logger: FastifyBaseLogger;
  /** Writes the one line per request. */
  requestLines: RequestLines;
  bodyLimitBytes: number;
  authenticator: Authenticator;
  rateLimits: RateLimits;
  metrics: HttpMetrics;
  /** The routes; those that declare `fromMemory` are tried before a request is routed (not while rate limits are on: those need the route's check). */
  routes: RouteDefinition[];
  /** How long a client may take to send a request's headers, and the whole request; how long an idle keep-alive connection stays open. */
  timeouts: { headersMs: number; requestMs: number; keepAliveMs: number };
}

const methods = ["GET", "POST", "PUT", "DELETE", "PATCH"] as const;

/** A route the server answers, and who may call it. */
export interface RouteEntry {
  method: string;
  url: string;
  access: AccessKind;
}

const catalogues = new WeakMap<FastifyInstance, RouteEntry[]>();

/** Every route of a server built by `buildServer` that declares its access (all but the interactive docs' assets), sockets included. */
export function registeredRoutes(app: FastifyInstance): RouteEntry[] {
  return catalogues.get(app) ?? [];
}
const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Starlette parses queries with parse_qsl(keep_blank_values=True); every value of every key is kept. Collected in a
 * Map, so that names such as `__proto__` or `constructor` are plain keys rather than Object.prototype's members.
 */
function parseQuery(text: string): Record<string, string[]> {
  if (text === "") return {};
  const result = new Map<string, string[]>();
  for (const [key, value] of new URLSearchParams(text)) {
    const values = result.get(key);
    if (values) values.push(value);
    else result.set(key, [value]);
  }
  return Object.fromEntries(result);
}

function parseJsonBody(body: Buffer): unknown {
  if (body.length === 0) return undefined;
  let text: string;
  try {
    text = strictUtf8.decode(body);
  } catch {
    throw new MalformedBodyError();
  }
  let parsed: ReturnType<typeof parsePythonJson>;
  try {
    parsed = parsePythonJson(text);
  } catch (error) {
    // Python raises RecursionError on absurdly deep nesting, which FastAPI answers with 400; so do we.
    if (error instanceof RangeError) throw new MalformedBodyError();
    throw error;
  }
  if (!parsed.ok) throw new RequestValidationError([jsonInvalidIssue(parsed.pos, parsed.msg)]);
  return parsed.value;
}

/** Like Fastify's default for a request Node could not parse or that timed out, in FastAPI's body shape. */
function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  if (error.code === "ECONNRESET" || socket.destroyed) return;
  const status = error.code === "ERR_HTTP_REQUEST_TIMEOUT" ? 408 : error.code === "HPE_HEADER_OVERFLOW" ? 431 : 400;
  const reason = STATUS_CODES[status] ?? "Bad Request";
  const body = JSON.stringify({ detail: reason });
  if (socket.writable) {
    socket.write(`HTTP/1.1 ${status} ${reason}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n${body}`);
  }
  socket.destroy(error);
}

/** Node's condition for emitting `upgrade` rather than `request`. */
function isUpgrade(raw: IncomingMessage): boolean {
  return raw.headers.upgrade !== undefined && /(^|,)\s*upgrade\s*(,|$)/i.test(raw.headers.connection ?? "");
}

/** The client's `X-Request-Id` when it is a plausible id, else a new one. */
function requestIdOf(headers: IncomingHttpHeaders): string {
  const given = headers["x-request-id"];
  return typeof given === "string" && /^[\w.-]{1,128}$/.test(given) ? given : uuidv4();
}

/** The error body shape of a request whose route declares one, from the moment its handler runs (credential and validation errors keep FastAPI's). */
const handlerErrorShapes = new WeakMap<FastifyRequest, ErrorBodyShape>();

const authorizationHeader = Type.Object({ authorization: Type.String({ description: "API key or thread token, raw or as `Bearer <credential>`" }) });

export async function buildServer(options: ServerOptions): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: options.logger,
    bodyLimit: options.bodyLimitBytes,
    exposeHeadRoutes: false,
    // find-my-way answers 404 for a path parameter over 100 characters by default; the request head (16 KiB) is
    // the real bound, so ids of any length reach their route, whose schema refuses those over 200 with a 422.
    routerOptions: { querystringParser: parseQuery, maxParamLength: 16 * 1024 },
    genReqId: (request) => requestIdOf(request.headers),
    // Node's server as Fastify makes it, with answers from memory tried before Fastify routes a request.
    serverFactory: (handler) => {
      // Node checks request and header timeouts on this interval (30 s by default), so a stalled client is cut promptly.
      const { headersMs, requestMs, keepAliveMs } = options.timeouts;
      const server = { connectionsCheckingInterval: 1_000, headersTimeout: Math.min(headersMs, requestMs), requestTimeout: requestMs, keepAliveTimeout: keepAliveMs };
      return createServer(server, (raw, response) => {
        if (!answerFromMemory(raw, response)) handler(raw, response);
      });
    },
    return503OnClosing: true,
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: (logger, bindings, childOptions) => new LazyRequestLogger(logger, bindings, childOptions),
    // A malformed URL (bad percent-encoding) and malformed HTTP get FastAPI's `{"detail"}` shape, not Fastify's own.
    // Fastify runs no hooks for these, so a refused upgrade's socket is closed here (see the onResponse hook).
    frameworkErrors: (_error, request, reply) => {
      const body = JSON.stringify({ detail: "Bad Request" });
      reply.raw.writeHead(400, { "content-type": "application/json", "content-length": Buffer.byteLength(body) }).end(body, () => {
        if (isUpgrade(request.raw)) request.raw.socket.destroy();
      });
    },
    clientErrorHandler: answerClientError,
  });
  app.setValidatorCompiler(() => () => true);
  app.removeAllContentTypeParsers();
  for (const jsonType of ["application/json", /^application\/[\w.+-]+\+json$/]) {
    app.addContentTypeParser(jsonType, { parseAs: "buffer" }, async (_request: FastifyRequest, body: Buffer | string) =>
      parseJsonBody(Buffer.isBuffer(body) ? body : Buffer.from(body)),
    );
  }
  // FastAPI validates a body of any other type as raw text, which a model then rejects with `model_attributes_type`.
  app.addContentTypeParser("*", { parseAs: "string" }, async (_request: FastifyRequest, body: Buffer | string) =>
    body === "" ? undefined : body.toString(),
  );

  /** One line per request (Fastify's default writes two), and the request's metrics. */
  const finished = (requestId: string, method: string, route: string, status: number, ms: number): void => {
    options.metrics.observe(method, route, status, ms / 1000);
    // The route pattern, not the URL, so that no query value is logged. Written with the request id by a writer of
    // its own, so that no per-request child logger is made.
    options.requestLines.write(requestId, method, route, status, Math.round(ms * 10) / 10);
  };

  let closing = false;
  const fromMemory = memoryAnswers(options.rateLimits.enabled ? [] : options.routes, options.authenticator);
  /** Serves a request from memory when a route's `fromMemory` has it; false to let Fastify route it. */
  function answerFromMemory(raw: IncomingMessage, response: ServerResponse): boolean {
    if (closing || !fromMemory) return false;
    const started = performance.now();
    const found = fromMemory(raw.method ?? "", raw.url ?? "", raw.headers.authorization);
    if (!found) return false;
    const requestId = requestIdOf(raw.headers);
    response.writeHead(200, {
      "x-request-id": requestId,
      "access-control-allow-origin": "*",
      "content-type": found.contentType,
      "content-length": found.body.length,
    });
    response.end(found.body);
    finished(requestId, "GET", found.route, 200, performance.now() - started);
    return true;
  }
  app.addHook("preClose", (done) => {
    closing = true;
    done();
  });

  // Hooks in callback style: Fastify runs them without a promise and a microtask each, on every request.
  app.addHook("onRequest", (request, reply, done) => {
    reply.header("x-request-id", request.id);
    // Any origin may call the interface from a browser (the widget on a customer's site): credentials travel in the
    // Authorization header, never in cookies, so a page can only use a token its own backend gave it.
    reply.header("access-control-allow-origin", "*");
    if (request.method === "OPTIONS" && request.headers["access-control-request-method"] !== undefined) {
      reply
        .code(204)
        .header("access-control-allow-methods", "GET, POST, PUT, PATCH, DELETE")
        .header("access-control-allow-headers", "authorization, content-type, accept")
        .header("access-control-max-age", "600")
        .send();
      return;
    }
    done();
  });
  app.addHook("onResponse", (request, reply, done) => {
    finished(request.id, request.method, request.routeOptions.url ?? "unmatched", reply.statusCode, reply.elapsedTime);
    // Node hands an upgrade request's socket over for good: answered over HTTP instead (no socket route took it, or
    // it was refused), nothing else would ever close it, and the server could not shut down while it is open.
    if (isUpgrade(request.raw)) request.raw.socket.destroy();
    done();
  });
  app.setErrorHandler((error, request, reply) => {
    const mapped = mapError(error, handlerErrorShapes.get(request));
    if (mapped.status >= 500 && mapped.status !== 502 && mapped.status !== 503 && mapped.status !== 504) {
      request.log.error({ err: error }, "request failed");
    }
    if (reply.sent || reply.raw.headersSent) return;
    reply.code(mapped.status).headers(mapped.headers).send(mapped.body);
  });

  const router = FindMyWay();
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split("?")[0] ?? "/";
    const allowed = methods.filter((method) => router.find(method, path));
    if (allowed.length > 0) {
      return reply.code(405).header("allow", allowed.join(", ")).send({ detail: "Method Not Allowed" });
    }
    if (path.length > 1 && path.endsWith("/") && router.find(request.method as (typeof methods)[number], path.slice(0, -1))) {
      const query = request.url.slice(path.length);
      return reply.code(307).header("location", path.slice(0, -1) + query).send();
    }
    return reply.code(404).send({ detail: "Not Found" });
  });

  const catalogue: RouteEntry[] = [];
  catalogues.set(app, catalogue);
  app.addHook("onRoute", (route) => {
    const access = route.config?.access;
    if (access) for (const method of [route.method].flat()) catalogue.push({ method, url: route.url, access });
  });

  // The `x-` keys go into the document as they are; a variable rather than a literal, since the plugin's type lists none.
  const openapi = {
    openapi: "3.1.0",
    info: { title: "Parley", version: "1.0.0", description: openapiExtensions.description },
    components: { securitySchemes: { authorization: { type: "apiKey" as const, in: "header", name: "Authorization" } } },
    "x-websockets": openapiExtensions["x-websockets"],
    "x-streams": openapiExtensions["x-streams"],
  };
  await app.register(fastifySwagger, { openapi });
  await app.register(fastifySwaggerUi, { routePrefix: "/docs" });

  for (const definition of options.routes) {
    router.on(definition.method, definition.url, () => undefined);
    registerRoute(app, definition, options);
  }
  app.get("/openapi.json", { schema: { hide: true }, config: { access: "public" } }, async () => app.swagger());
  router.on("GET", "/openapi.json", () => undefined);
  return app;
}

/**
 * The answer of a route that declares `fromMemory`, found with the route's own URL pattern, parameter schema and
 * access declaration, for a remembered API key: undefined for anything else (a query, a parameter that needs
 * percent-decoding or fails its schema, a thread token, a key not in memory), which the route itself then answers.
 */
function memoryAnswers(
  routes: RouteDefinition[],
  authenticator: Authenticator,
): ((method: string, url: string, authorization: string | undefined) => { route: string; contentType: string; body: Buffer } | undefined) | undefined {
  const answering = routes.filter((definition) => definition.fromMemory !== undefined && takesCaller(definition.access));
  if (answering.length === 0) return undefined;
  const router = FindMyWay();
  for (const definition of answering) router.on(definition.method, definition.url, () => undefined, definition);
  return (method, url, authorization) => {
    if (authorization === undefined || url.includes("?") || url.includes("%")) return undefined;
    const found = router.find(method as (typeof methods)[number], url);
    if (!found) return undefined;
    const definition = found.store as RouteDefinition;
    const params = definition.params ? validatePart(definition.params, { ...found.params }, "path") : undefined;
    if (params && params.issues.length > 0) return undefined;
    const caller = authenticator.rememberedCaller(authorization);
    if (!caller || !definition.fromMemory) return undefined;
    try {
      enforceAccess(definition.access, caller, { params: params?.value, query: undefined, body: undefined });
    } catch {
      return undefined;
    }
    const body = definition.fromMemory.answer({ caller, params: params?.value });
    return body ? { route: definition.url, contentType: definition.fromMemory.contentType, body } : undefined;
  };
}

/**
 * Registers a route declared with `defineRoute` on `app` (the server's own, or a plugin's with its own body parsers):
 * its credentials (or a vendor's signature header) checked, then its request validated, then the checks of its access
 * declaration that need the validated request, then its resource loaded (a vendor's webhook verified), then its
 * handler run.
 */
export function registerRoute(app: FastifyInstance, definition: RouteDefinition, checks: AccessChecks): void {
  const { authenticator, rateLimits } = checks;
  const access = definition.access;
  const needsCaller = takesCaller(access);
  const vendorSigned = typeof access === "object" && "vendorSignature" in access ? access : undefined;
  if (vendorSigned && !definition.resource) throw new Error(`${definition.method} ${definition.url}: a vendor's webhook is verified by its resource loader, and declares none`);
  const successStatus = Number(Object.keys(definition.responses).find((status) => status.startsWith("2")) ?? 200);
  app.route({
    method: definition.method,
    url: definition.url,
    config: { access: accessKindOf(access) },
    ...(definition.bodyLimit === undefined ? {} : { bodyLimit: definition.bodyLimit }),
    schema: {
      tags: definition.tags,
      summary: definition.summary,
      ...(definition.description ? { description: definition.description } : {}),
      ...(definition.params ? { params: definition.params } : {}),
      ...(definition.query ? { querystring: definition.query } : {}),
      ...(definition.body ? { body: definition.body } : {}),
      ...(needsCaller ? { headers: authorizationHeader, security: [{ authorization: [] }] } : {}),
      response: definition.responses,
      ...(definition.hidden ? { hide: true } : {}),
    },
    handler: async (request, reply) => {
      const issues: ValidationIssue[] = [];
      let caller: Caller | undefined;
      if (access === "admin") {
        await authenticator.admin(request.headers.authorization);
      } else if (needsCaller) {
        const header = request.headers.authorization;
        if (header === undefined) issues.push(missingAuthorization);
        else caller = await authenticator.caller(header, typeof access === "object");
        if (caller && rateLimits.enabled) await rateLimits.check(caller);
      }
      const webhook = vendorSigned ? signedWebhookOf(vendorSigned, request) : undefined;
      const params = definition.params ? validatePart(definition.params, request.params, "path") : undefined;
      const query = definition.query ? validatePart(definition.query, request.query, "query") : undefined;
      const body = definition.body ? validatePart(definition.body, request.body, "body") : undefined;
      for (const part of [params, query, body]) if (part) issues.push(...part.issues);
      if (issues.length > 0) throw new RequestValidationError(issues);
      if (containsNul(params?.value)) throw new UnstorableTextError();
      const parts = { caller, params: params?.value, query: query?.value, body: body?.value };
      enforceAccess(access, caller, parts);
      // Literals rather than spreads of `parts`: this code serves every route, and the spreads' property stores, fed
      // every route's shapes, went megamorphic (a runtime call per property on every request).
      const resource = definition.resource
        ? await definition.resource({ caller, params: parts.params, query: parts.query, body: parts.body, webhook } as Parameters<NonNullable<RouteDefinition["resource"]>>[0])
        : undefined;
      if (definition.errorShape) handlerErrorShapes.set(request, definition.errorShape);
      const context = { caller, params: parts.params, query: parts.query, body: parts.body, resource, request, reply };
      const result = await definition.handler(context as Parameters<RouteDefinition["handler"]>[0]);
      if (definition.raw) return reply;
      reply.code(successStatus);
      return successStatus === 204 ? reply.send() : result;
    },
  });
}
