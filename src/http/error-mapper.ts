import { STATUS_CODES } from "node:http";
import {
  ConflictError,
  DomainError,
  ForbiddenError,
  InvalidOperationError,
  NotFoundError,
  NotImplementedError,
  RangeNotSatisfiableError,
  RateLimitedError,
  RequestValidationError,
  UnauthenticatedError,
  UnavailableError,
  UpstreamError,
} from "../domain/shared/errors.js";
import { nulRefusal } from "../domain/shared/storable-text.js";
import { isConnectionFailure } from "../store/db.js";
import { MalformedBodyError, UnstorableTextError } from "./http-errors.js";

export interface MappedError {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/**
 * How a route reports a failure: FastAPI's `{"detail"}` (everything current), or the earlier generation's
 * `{"error", "status_code"}` of `retrieve_conversation_summary`.
 */
export type ErrorBodyShape = "detail" | "legacy-error";

type ErrorClass = abstract new (...args: never[]) => DomainError;

/** Each domain error kind and its status; the first class that matches wins, so subclasses come first. */
const statusByKind: [ErrorClass, number][] = [
  [NotFoundError, 404],
  [ConflictError, 409],
  [InvalidOperationError, 400],
  [UnauthenticatedError, 401],
  [ForbiddenError, 403],
  [RangeNotSatisfiableError, 416],
  [RateLimitedError, 429],
  [NotImplementedError, 501],
  [UnavailableError, 503],
];

function domainStatus(error: DomainError): number {
  if (error instanceof UpstreamError) return error.timedOut ? 504 : 502;
  return statusByKind.find(([kind]) => error instanceof kind)?.[1] ?? 500;
}

function domainHeaders(error: DomainError): Record<string, string> {
  if (error instanceof UnauthenticatedError) return { "www-authenticate": "Bearer" };
  if (error instanceof RateLimitedError) return { "retry-after": String(error.retryAfterSeconds) };
  if (error instanceof RangeNotSatisfiableError) return { "content-range": `bytes */${error.size}` };
  return {};
}

/** The one place where errors become HTTP responses, in FastAPI's shapes. */
export function mapError(error: unknown, shape: ErrorBodyShape = "detail"): MappedError {
  if (error instanceof RequestValidationError) return { status: 422, headers: {}, body: { detail: error.issues } };
  if (error instanceof DomainError) {
    const status = domainStatus(error);
    const body = shape === "legacy-error" ? { error: error.message, status_code: status } : { detail: error.message };
    return { status, headers: domainHeaders(error), body };
  }
  if (error instanceof MalformedBodyError || error instanceof UnstorableTextError) return { status: 400, headers: {}, body: { detail: error.message } };
  const code = (error as { code?: unknown } | null)?.code;
  if (code === "FST_ERR_CTP_BODY_TOO_LARGE") return { status: 413, headers: {}, body: { detail: "Request Entity Too Large" } };
  if (code === "FST_ERR_CTP_INVALID_MEDIA_TYPE" || code === "FST_ERR_CTP_INVALID_CONTENT_LENGTH") {
    return { status: 400, headers: {}, body: { detail: "There was an error parsing the body" } };
  }
  // PostgreSQL refuses U+0000 in text (22021) and in jsonb (22P05); such input can only come from the request.
  if (code === "22021" || code === "22P05") return { status: 400, headers: {}, body: { detail: nulRefusal } };
  // A plugin's own refusal of the request, such as the static files under /docs refusing `..` (403) or a NUL (400):
  // its status with the standard reason, never the plugin's message, which may name a file.
  const statusCode = (error as { statusCode?: unknown } | null)?.statusCode;
  if (typeof statusCode === "number" && statusCode >= 400 && statusCode < 500) {
    return { status: statusCode, headers: {}, body: { detail: STATUS_CODES[statusCode] ?? "Bad Request" } };
  }
  if (isConnectionFailure(error)) return { status: 503, headers: { "retry-after": "1" }, body: { detail: "Database unavailable, try again shortly" } };
  return { status: 500, headers: {}, body: { detail: "Internal Server Error" } };
}
