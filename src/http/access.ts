import type { FastifyRequest } from "fastify";
import type { Authenticator, Caller } from "../domain/access/credentials.js";
import type { RateLimits } from "../domain/access/rate-limits.js";
import type { SignedWebhook } from "../providers/voice/vendor-http.js";
import { ForbiddenError, UnauthenticatedError } from "../domain/shared/errors.js";
import { enforceThreadScope } from "./thread-scope.js";

/** The validated parts of a request, as an access declaration reads them. */
export interface RequestParts<P, Q, B> {
  params: P;
  query: Q;
  body: B;
}

/**
 * Which thread an entry point touches, read from the validated request: an API key of the thread's organization or
 * that thread's own token may call it, and the server checks the token's scope before the handler runs.
 */
export interface ThreadAccess<P = unknown, Q = unknown, B = unknown> {
  thread: (request: RequestParts<P, Q, B>) => string;
  /**
   * The refusal of a request that a thread token may not make although it opens the thread, since it acts on the
   * whole organization (a simulation creates threads of its own); undefined for a request the token may make.
   */
  apiKeyOnly?: (request: RequestParts<P, Q, B>) => string | undefined;
}

/** Checks a link that `sign` gave out: the resource it names, until its expiry. */
export interface UrlSigner {
  verify(resource: string, expires: string | undefined, signature: string | undefined): boolean;
}

/**
 * A link signed for one resource, carrying its own `expires` and `signature` query parameters instead of a credential
 * (a recording played by a browser's audio element, which sends no Authorization).
 */
export interface SignedUrlAccess<P = unknown, Q = unknown, B = unknown> {
  signedUrl: {
    signer: UrlSigner;
    /** The resource the link must be signed for, read from the validated request. */
    resource: (request: RequestParts<P, Q, B>) => string;
    /** The 403's detail for a tampered or expired link. */
    refusal: string;
  };
}

export type Vendor = "twilio" | "retell";

/**
 * A telephony vendor's webhook, signed with the vendor's key for a project over its raw body (and, for Twilio, the URL
 * it called). The server reads the vendor's signature header and refuses a request without one; the route's resource
 * loader, given the signed webhook, finds the project whose key must have signed it (the call's, the dialed number's)
 * and verifies the signature with the vendor's own code before it returns anything, so the handler is given only what
 * was verified. Its plugin must keep bodies raw (a string as sent), as a signature covers the bytes.
 */
export interface VendorSignatureAccess {
  vendorSignature: Vendor;
  /** `PUBLIC_BASE_URL`, the address the vendor was given, for a vendor that signs the URL it calls (Twilio). */
  publicBaseUrl?: string | undefined;
}

/**
 * A telephony vendor's stream, which authenticates itself inside the stream: Twilio's media stream by the token
 * Parley put in the call's TwiML (its `start` message), Retell's LLM socket by its unguessable call id.
 */
export interface VendorStreamAccess {
  vendorStream: Vendor;
}

/**
 * Who may call an entry point: nobody needs credentials (`public`), the operator (`admin`), an organization's API key
 * (`apiKey`), an API key or the token of the thread that `{thread}` names, whoever holds a link signed for the
 * resource (`{signedUrl}`), the holder of a web call's join token (`joinToken`: the `token` query parameter, which
 * only the call's row can check, so the entry point's resource loader checks it while loading the call), or a
 * telephony vendor (`{vendorSignature}`, `{vendorStream}`).
 */
export type Access<P = unknown, Q = unknown, B = unknown> =
  | "public"
  | "admin"
  | "apiKey"
  | "joinToken"
  | ThreadAccess<P, Q, B>
  | SignedUrlAccess<P, Q, B>
  | VendorSignatureAccess
  | VendorStreamAccess;

/** How an entry point is guarded, as the route catalogue reports it. */
export type AccessKind = "public" | "admin" | "apiKey" | "thread" | "signedUrl" | "joinToken" | "vendorSignature" | "vendorStream";

export function accessKindOf(access: Access): AccessKind {
  if (typeof access === "string") return access;
  if ("thread" in access) return "thread";
  if ("signedUrl" in access) return "signedUrl";
  return "vendorSignature" in access ? "vendorSignature" : "vendorStream";
}

declare module "fastify" {
  /** Set by Parley on every route it serves, sockets included, for the route catalogue. */
  interface FastifyContextConfig {
    access?: AccessKind;
  }
}

/** Whether an entry point takes a Parley credential (an API key or a thread token) and so hands its handler a caller. */
export type CallerFor<A> = A extends "apiKey" | { thread: unknown } ? Caller : undefined;

export function takesCaller(access: Access): boolean {
  return access === "apiKey" || (typeof access === "object" && "thread" in access);
}

/** What checking an entry point's credentials needs. */
export interface AccessChecks {
  authenticator: Authenticator;
  rateLimits: RateLimits;
}

/** Each vendor's signature header, and its refusal of a webhook without one (as of one with a wrong signature). */
const vendorSignatures: Record<Vendor, { header: string; refusal: () => Error }> = {
  twilio: { header: "x-twilio-signature", refusal: () => new ForbiddenError("Invalid signature") },
  retell: { header: "x-retell-signature", refusal: () => new UnauthenticatedError("Invalid signature") },
};

/** A vendor's webhook as its signature covers it, for the route's resource loader to verify; refused without a signature. */
export function signedWebhookOf(access: VendorSignatureAccess, request: FastifyRequest): SignedWebhook {
  const { header, refusal } = vendorSignatures[access.vendorSignature];
  const signature = request.headers[header];
  if (typeof signature !== "string" || signature === "") throw refusal();
  return { rawBody: typeof request.body === "string" ? request.body : "", signature, url: `${access.publicBaseUrl ?? ""}${request.url}` };
}

/**
 * The checks that need the validated request, in order: a thread token's scope and the requests it may not make,
 * a signed link's signature. Credentials themselves are checked before validation, by the caller of this.
 */
export function enforceAccess(access: Access, caller: Caller | undefined, parts: RequestParts<unknown, unknown, unknown>): void {
  if (typeof access !== "object") return;
  if ("thread" in access && caller) {
    enforceThreadScope(caller, access.thread(parts));
    const refusal = caller.kind === "threadToken" ? access.apiKeyOnly?.(parts) : undefined;
    if (refusal !== undefined) throw new ForbiddenError(refusal);
  } else if ("signedUrl" in access) {
    const { signer, resource, refusal } = access.signedUrl;
    const query = (parts.query ?? {}) as { expires?: string; signature?: string };
    if (!signer.verify(resource(parts), query.expires, query.signature)) throw new ForbiddenError(refusal);
  }
}
