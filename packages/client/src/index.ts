export { Parley, type ParleyOptions } from "./client.js";
export {
  AuthenticationError, ConflictError, NotFoundError, ParleyError, PermissionDeniedError, RateLimitError, ServerError, StreamError,
  UpstreamError, ValidationError, type ValidationIssue,
} from "./errors.js";
export { ThreadEventStream, type EventStreamOptions, type WebSocketConstructor, type WebSocketLike } from "./events.js";
export * from "./types.js";
export type { paths } from "./openapi.js";
