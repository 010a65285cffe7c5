import type { Static, TSchema } from "@sinclair/typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Caller } from "../domain/access/credentials.js";
import type { ErrorBodyShape } from "./error-mapper.js";

type StaticOr<T extends TSchema | undefined> = T extends TSchema ? Static<T> : undefined;

/** The validated parts of a request, as a route's thread resolver reads them. */
export interface RequestParts<P, Q, B> {
  params: P;
  query: Q;
  body: B;
}

/**
 * Which thread a route touches, read from the validated request: an API key of the thread's organization or that
 * thread's own token may call it, and the server checks the token's scope before the handler runs.
 */
export interface ThreadAccess<P = unknown, Q = unknown, B = unknown> {
  thread: (request: RequestParts<P, Q, B>) => string;
}

/**
 * Who may call a route: nobody needs credentials (`public`), the operator (`admin`), an organization's API key
 * (`apiKey`), or an API key or the token of the thread that `{thread}` names in the request.
 */
export type Access<P = unknown, Q = unknown, B = unknown> = "public" | "admin" | "apiKey" | ThreadAccess<P, Q, B>;

/** How a route is guarded, as the route catalogue reports it. */
export type AccessKind = "public" | "admin" | "apiKey" | "thread";

export function accessKindOf(access: Access): AccessKind {
  return typeof access === "object" ? "thread" : access;
}

declare module "fastify" {
  /** Set by Parley on every route it serves, sockets included, for the route catalogue. */
  interface FastifyContextConfig {
    access?: AccessKind;
  }
}

type CallerFor<A> = A extends "public" | "admin" ? undefined : Caller;

export interface HandlerContext<A, P, Q, B> {
  caller: CallerFor<A>;
  params: P;
  query: Q;
  body: B;
  request: FastifyRequest;
  reply: FastifyReply;
}

/** A route declared as data: validation, the OpenAPI document and the auth check all come from this one object. */
export interface RouteDefinition<
  A extends Access<StaticOr<P>, StaticOr<Q>, StaticOr<B>> = Access,
  P extends TSchema | undefined = TSchema | undefined,
  Q extends TSchema | undefined = TSchema | undefined,
  B extends TSchema | undefined = TSchema | undefined,
> {
  method: "GET" | "POST" | "PUT" | "DELETE";
  url: string;
  tags: string[];
  summary: string;
  description?: string;
  access: A;
  params?: P;
  query?: Q;
  body?: B;
  /** Documented (and serialized) responses by status; the first 2xx entry is the success status. */
  responses: Record<number, TSchema>;
  /** The body of the errors this route's handler throws: FastAPI's `{"detail"}` unless stated. */
  errorShape?: ErrorBodyShape;
  /** Set for routes whose handler writes the response itself (streams, binary files, pre-rendered JSON). */
  raw?: boolean;
  /** Left out of the OpenAPI document: a file for browsers (the widget), not an operation of the interface. */
  hidden?: boolean;
  handler(context: HandlerContext<A, StaticOr<P>, StaticOr<Q>, StaticOr<B>>): Promise<unknown>;
}

/** Keeps each route's literal types while letting a file export a plain array of them. */
export function defineRoute<
  P extends TSchema | undefined = undefined,
  Q extends TSchema | undefined = undefined,
  B extends TSchema | undefined = undefined,
  A extends Access<StaticOr<P>, StaticOr<Q>, StaticOr<B>> = Access<StaticOr<P>, StaticOr<Q>, StaticOr<B>>,
>(definition: RouteDefinition<A, P, Q, B>): RouteDefinition {
  return definition as unknown as RouteDefinition;
}

/**
 * Answers a request from this instance's memory, synchronously and before it is routed, or returns undefined to let
 * the routes handle it. Only for answers a route would give exactly alike (a cache hit of that route).
 */
export type MemoryAnswer = (
  method: string,
  url: string,
  authorization: string | undefined,
) => { route: string; contentType: string; body: Buffer } | undefined;
