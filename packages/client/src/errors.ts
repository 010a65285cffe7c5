/** One item of a FastAPI-style 422 body. */
export interface ValidationIssue {
  type: string;
  loc: (string | number)[];
  msg: string;
  input: unknown;
  ctx?: Record<string, unknown>;
}

/** Any answer outside 2xx. `detail` is the body's `detail` (a message, or the 422 issues). */
export class ParleyError extends Error {
  constructor(
    readonly status: number,
    readonly detail: unknown,
    readonly requestId: string | null,
  ) {
    super(typeof detail === "string" ? `${status}: ${detail}` : `HTTP ${status}`);
    this.name = new.target.name;
  }
}

/** 422: the request failed validation; `issues` says where and why. */
export class ValidationError extends ParleyError {
  constructor(
    readonly issues: ValidationIssue[],
    requestId: string | null,
  ) {
    super(422, issues, requestId);
    this.message = issues.map((issue) => `${issue.loc.join(".")}: ${issue.msg}`).join("; ");
  }
}

/** 401: unknown, revoked, malformed or expired credential. */
export class AuthenticationError extends ParleyError {}
/** 403: a valid credential of the wrong scope, or a bad recording signature. */
export class PermissionDeniedError extends ParleyError {}
/** 404: no such resource in the caller's organization. */
export class NotFoundError extends ParleyError {}
/** 409: for example a second active phone call on a thread. */
export class ConflictError extends ParleyError {}
/** 429: `retryAfterSeconds` from the `Retry-After` header. */
export class RateLimitError extends ParleyError {
  constructor(
    detail: unknown,
    requestId: string | null,
    readonly retryAfterSeconds: number | null,
  ) {
    super(429, detail, requestId);
  }
}
/** 502 or 504: the model or voice provider failed; the user's message is kept. */
export class UpstreamError extends ParleyError {}
/** Any other 5xx. */
export class ServerError extends ParleyError {}

/** A stream that ended with an `{"error","status_code"}` line after it had started. */
export class StreamError extends ParleyError {}

function isIssueList(value: unknown): value is ValidationIssue[] {
  return Array.isArray(value) && value.every((item) => typeof item === "object" && item !== null && "loc" in item && "msg" in item && "type" in item);
}

/** The typed exception for a failed response. */
export async function errorOf(response: Response): Promise<ParleyError> {
  const requestId = response.headers.get("x-request-id");
  const text = await response.text();
  let detail: unknown = text;
  try {
    const body: unknown = JSON.parse(text);
    if (typeof body === "object" && body !== null && "detail" in body) detail = (body as { detail: unknown }).detail;
    else if (typeof body === "object" && body !== null && "error" in body) detail = (body as { error: unknown }).error;
  } catch {
    // Not JSON: the raw text is the detail.
  }
  const status = response.status;
  if (status === 422 && isIssueList(detail)) return new ValidationError(detail, requestId);
  if (status === 401) return new AuthenticationError(status, detail, requestId);
  if (status === 403) return new PermissionDeniedError(status, detail, requestId);
  if (status === 404) return new NotFoundError(status, detail, requestId);
  if (status === 409) return new ConflictError(status, detail, requestId);
  if (status === 429) {
    const retryAfter = Number(response.headers.get("retry-after"));
    return new RateLimitError(detail, requestId, Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : null);
  }
  if (status === 502 || status === 504) return new UpstreamError(status, detail, requestId);
  if (status >= 500) return new ServerError(status, detail, requestId);
  return new ParleyError(status, detail, requestId);
}
