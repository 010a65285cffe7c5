import type { ValidationIssue } from "./validation-issue.js";

/** Typed domain errors; the HTTP edge maps each to its documented status and body in one place. */
export class DomainError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class NotFoundError extends DomainError {
  constructor(message: string) {
    super(404, message);
  }
}

export class ConflictError extends DomainError {
  constructor(message: string) {
    super(409, message);
  }
}

export class BadRequestError extends DomainError {
  constructor(message: string) {
    super(400, message);
  }
}

export class UnauthorizedError extends DomainError {
  constructor(message: string) {
    super(401, message);
  }
}

export class ForbiddenError extends DomainError {
  constructor(message: string) {
    super(403, message);
  }
}

export class NotImplementedError extends DomainError {
  constructor(message: string) {
    super(501, message);
  }
}

export class RateLimitedError extends DomainError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(429, message);
  }
}

/** A model or voice vendor failed: 502, or 504 when it did not answer within the budget. */
export class UpstreamError extends DomainError {
  constructor(message: string, readonly timedOut = false) {
    super(timedOut ? 504 : 502, message);
  }
}

export class ServiceUnavailableError extends DomainError {
  constructor(message: string) {
    super(503, message);
  }
}

/** A 422 in FastAPI's shape, for rules the request schema cannot state (an unknown timezone, a foreign cursor). */
export class RequestValidationError extends DomainError {
  constructor(readonly issues: ValidationIssue[]) {
    super(422, "Validation error");
  }
}

export function valueError(loc: ValidationIssue["loc"], message: string, input: unknown): RequestValidationError {
  return new RequestValidationError([{ type: "value_error", loc, msg: `Value error, ${message}`, input, ctx: { error: {} } }]);
}
