import type { Caller } from "../domain/access/credentials.js";
import { ForbiddenError } from "../domain/shared/errors.js";

/**
 * A thread token opens only its own thread. Every route that declares `access: {thread}` and every thread socket
 * goes through this one check, before its handler runs.
 */
export function enforceThreadScope(caller: Caller, threadId: string): void {
  if (caller.kind === "threadToken" && caller.threadId !== threadId) {
    throw new ForbiddenError("This token is not valid for this thread");
  }
}

/** Whether a caller's credential reaches a thread at all (the same rule, for answers that fall through instead of failing). */
export function threadScopeAllows(caller: Caller, threadId: string): boolean {
  return caller.kind !== "threadToken" || caller.threadId === threadId;
}
