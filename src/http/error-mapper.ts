import { DomainError, RateLimitedError, RequestValidationError } from "../domain/errors.js";
import { nulRefusal } from "../domain/storable-text.js";
import { isConnectionFailure } from "../store/db.js";

export interface MappedError {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** The one place where errors become HTTP responses, in FastAPI's shapes. */
export function mapError(error: unknown): MappedError {
  if (error instanceof RequestValidationError) return { status: 422, headers: {}, body: { detail: error.issues } };
  if (error instanceof DomainError) {
    const headers: Record<string, string> = {};
    if (error.status === 401) headers["www-authenticate"] = "Bearer";
    if (error instanceof RateLimitedError) headers["retry-after"] = String(error.retryAfterSeconds);
    return { status: error.status, headers, body: { detail: error.message } };
  }
  const code = (error as { code?: unknown } | null)?.code;
  if (code === "FST_ERR_CTP_BODY_TOO_LARGE") return { status: 413, headers: {}, body: { detail: "Request Entity Too Large" } };
  if (code === "FST_ERR_CTP_INVALID_MEDIA_TYPE" || code === "FST_ERR_CTP_INVALID_CONTENT_LENGTH") {
    return { status: 400, headers: {}, body: { detail: "There was an error parsing the body" } };
  }
  // PostgreSQL refuses U+0000 in text (22021) and in jsonb (22P05); such input can only come from the request.
  if (code === "22021" || code === "22P05") return { status: 400, headers: {}, body: { detail: nulRefusal } };
  if (isConnectionFailure(error)) return { status: 503, headers: { "retry-after": "1" }, body: { detail: "Database unavailable, try again shortly" } };
  return { status: 500, headers: {}, body: { detail: "Internal Server Error" } };
}
