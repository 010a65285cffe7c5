import type { TSchema } from "@sinclair/typebox";
import type { FastifyInstance, FastifyRequest } from "fastify";
import type { WebSocket } from "ws";
import type { Caller } from "../domain/access/credentials.js";
import { RequestValidationError } from "../domain/shared/errors.js";
import { accessKindOf, enforceAccess, type AccessChecks, type CallerFor, type ThreadAccess, type VendorStreamAccess } from "./access.js";
import type { ResourceLoader, StaticOr } from "./route.js";
import { rejectPlainHttp } from "./socket-support.js";
import { missingAuthorization } from "./validation/missing-authorization.js";
import { validatePart } from "./validation/validator.js";

/** Who may open a socket: a thread's sockets, a web call's join token, a vendor's stream. */
export type SocketAccess<P = unknown, Q = unknown> = ThreadAccess<P, Q> | "joinToken" | VendorStreamAccess;

export interface SocketContext<A, P, Q, R> {
  caller: CallerFor<A>;
  params: P;
  query: Q;
  resource: R;
  request: FastifyRequest;
}

/**
 * A WebSocket declared as data, as routes are: its path and query schemas, who may open it, what it serves. The
 * credential, the parameters and the resource are all checked before the upgrade, so a refused client gets the HTTP
 * status and body of any request; the socket opens only once they pass.
 */
export interface SocketDefinition<
  A extends SocketAccess<StaticOr<P>, StaticOr<Q>> = SocketAccess,
  P extends TSchema | undefined = TSchema | undefined,
  Q extends TSchema | undefined = TSchema | undefined,
  R = unknown,
> {
  url: string;
  access: A;
  params?: P;
  query?: Q;
  /** The query parameter that may carry the credential instead of the Authorization header (browsers cannot set headers on a WebSocket). */
  credentialParameter?: keyof StaticOr<Q> & string;
  resource?: ResourceLoader<A, StaticOr<P>, StaticOr<Q>, undefined, R>;
  open(socket: WebSocket, context: SocketContext<A, StaticOr<P>, StaticOr<Q>, R>): void;
}

/** Keeps each socket's literal types while letting a file export a plain list of them. */
export function defineSocket<
  P extends TSchema | undefined = undefined,
  Q extends TSchema | undefined = undefined,
  A extends SocketAccess<StaticOr<P>, StaticOr<Q>> = SocketAccess<StaticOr<P>, StaticOr<Q>>,
  R = undefined,
>(definition: SocketDefinition<A, P, Q, R>): SocketDefinition {
  return definition as unknown as SocketDefinition;
}

/**
 * Registers a socket on `app`, which must have @fastify/websocket registered (each plugin sets its own frame limit).
 * Plain HTTP is 404 (as in Starlette), then the path's and the query's parameters are validated together, then the
 * credential is checked, then the resource loaded.
 */
export function registerSocket(app: FastifyInstance, definition: SocketDefinition, checks: AccessChecks): void {
  const opened = new WeakMap<FastifyRequest, SocketContext<SocketAccess, unknown, unknown, unknown>>();
  const access = definition.access;
  app.get(
    definition.url,
    {
      websocket: true,
      config: { access: accessKindOf(access) },
      // The access log would carry the URL, and with it a `token` parameter: sockets log warnings only.
      logLevel: "warn",
      preValidation: async (request) => {
        rejectPlainHttp(request);
        const params = definition.params ? validatePart(definition.params, request.params, "path") : { value: request.params, issues: [] };
        const query = definition.query ? validatePart(definition.query, request.query, "query") : { value: request.query, issues: [] };
        if (params.issues.length + query.issues.length > 0) throw new RequestValidationError([...params.issues, ...query.issues]);
        let caller: Caller | undefined;
        if (typeof access === "object" && "thread" in access) {
          const fromQuery = definition.credentialParameter ? (query.value as Record<string, string | undefined>)[definition.credentialParameter] : undefined;
          const credential = request.headers.authorization ?? fromQuery;
          if (credential === undefined) throw new RequestValidationError([missingAuthorization]);
          caller = await checks.authenticator.caller(credential, true);
        }
        const parts = { caller, params: params.value, query: query.value, body: undefined };
        enforceAccess(access, caller, parts);
        const resource = definition.resource ? await definition.resource(parts as Parameters<NonNullable<SocketDefinition["resource"]>>[0]) : undefined;
        opened.set(request, { ...parts, resource, request } as SocketContext<SocketAccess, unknown, unknown, unknown>);
      },
    },
    (socket, request) => {
      const context = opened.get(request);
      if (!context) return socket.close(1011, "not authorized");
      definition.open(socket, context as Parameters<SocketDefinition["open"]>[1]);
    },
  );
}
