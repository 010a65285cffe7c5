import type { Static, TSchema } from "@sinclair/typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { SignedWebhook } from "../providers/voice/vendor-http.js";
import type { Access, CallerFor, RequestParts, VendorSignatureAccess } from "./access.js";
import type { ErrorBodyShape } from "./error-mapper.js";

export type StaticOr<T extends TSchema | undefined> = T extends TSchema ? Static<T> : undefined;

/** What a resource loader reads: the checked caller, the validated request, and a vendor's webhook as it was signed. */
export interface LoaderContext<A, P, Q, B> extends RequestParts<P, Q, B> {
  caller: CallerFor<A>;
  /** A vendor's webhook (`{vendorSignature}`), whose signature the loader verifies before it returns anything. */
  webhook: A extends VendorSignatureAccess ? SignedWebhook : undefined;
}

/**
 * Loads what a handler touches, after the access check and scoped to the caller's organization (trigger.dev's
 * `findResource`): the handler is given the loaded resource rather than an id from the request, so that no id can
 * skip the scope. Refuses (404, 403) by throwing the domain's errors.
 */
export type ResourceLoader<A, P, Q, B, R> = (context: LoaderContext<A, P, Q, B>) => Promise<R>;

/** What a handler is given: the checked caller, the validated request and the loaded resource (a webhook only as verified). */
export interface HandlerContext<A, P, Q, B, R = undefined> extends RequestParts<P, Q, B> {
  caller: CallerFor<A>;
  resource: R;
  request: FastifyRequest;
  reply: FastifyReply;
}

/** A route declared as data: validation, the OpenAPI document and the auth check all come from this one object. */
export interface RouteDefinition<
  A extends Access<StaticOr<P>, StaticOr<Q>, StaticOr<B>> = Access,
  P extends TSchema | undefined = TSchema | undefined,
  Q extends TSchema | undefined = TSchema | undefined,
  B extends TSchema | undefined = TSchema | undefined,
  R = unknown,
> {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
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
  /** A larger body than the server's limit, for a vendor whose webhooks carry whole transcripts. */
  bodyLimit?: number;
  /** Required for `{vendorSignature}`: a webhook's signature is verified there, with the key of what it names. */
  resource?: ResourceLoader<A, StaticOr<P>, StaticOr<Q>, StaticOr<B>, R>;
  /**
   * The route's answer from this instance's memory, given a remembered API key and path parameters that need no
   * percent-decoding (no query): answered before the request is routed, with none of the route's machinery, and
   * exactly as the route would answer it (a cache hit of the route's own). Undefined to let the route answer.
   */
  fromMemory?: { contentType: string; answer: (context: { caller: CallerFor<A>; params: StaticOr<P> }) => Buffer | undefined };
  handler(context: HandlerContext<A, StaticOr<P>, StaticOr<Q>, StaticOr<B>, R>): Promise<unknown>;
}

/** Keeps each route's literal types while letting a file export a plain array of them. */
export function defineRoute<
  P extends TSchema | undefined = undefined,
  Q extends TSchema | undefined = undefined,
  B extends TSchema | undefined = undefined,
  A extends Access<StaticOr<P>, StaticOr<Q>, StaticOr<B>> = Access<StaticOr<P>, StaticOr<Q>, StaticOr<B>>,
  R = undefined,
>(definition: RouteDefinition<A, P, Q, B, R>): RouteDefinition {
  return definition as unknown as RouteDefinition;
}
