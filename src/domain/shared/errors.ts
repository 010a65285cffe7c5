import type { ValidationIssue } from "./validation-issue.js";

/**
 * Typed domain errors. They name what went wrong, never how a transport reports it: `http/error-mapper.ts` alone
 * turns each kind into its documented status code and body.
 */
export class DomainError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

export class NotFoundError extends DomainError {}

export class ConflictError extends DomainError {}

/** The request is well formed but cannot be carried out in the resource's current state. */
export class InvalidOperationError extends DomainError {}

/** No valid credential was presented. */
export class UnauthenticatedError extends DomainError {}

/** A valid credential that may not do this. */
export class ForbiddenError extends DomainError {}

export class NotImplementedError extends DomainError {}

export class RateLimitedError extends DomainError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
  }
}

/** A model or voice vendor failed, or did not answer within its budget. */
export class UpstreamError extends DomainError {
  constructor(
    message: string,
    readonly timedOut = false,
  ) {
    super(message);
  }
}

/** A dependency of the service itself (its database) cannot serve now; trying again later may succeed. */
export class UnavailableError extends DomainError {}

/** A byte range outside the resource. */
export class RangeNotSatisfiableError extends DomainError {
  constructor(readonly size: number) {
    super("Requested range not satisfiable");
  }
}

/** Input that breaks a rule the request schema cannot state (an unknown timezone, a foreign cursor), in FastAPI's 422 shape. */
export class RequestValidationError extends DomainError {
  constructor(readonly issues: ValidationIssue[]) {
    super("Validation error");
  }
}

export function valueError(loc: ValidationIssue["loc"], message: string, input: unknown): RequestValidationError {
  return new RequestValidationError([{ type: "value_error", loc, msg: `Value error, ${message}`, input, ctx: { error: {} } }]);
}
