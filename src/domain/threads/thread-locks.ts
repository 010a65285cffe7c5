/**
 * The lease a statement of the work takes itself (see `withLeasedWork`): the token to set on the thread row, the
 * backend pid that vouches for the holder, the lease's length; `markReleased` tells that a statement released it.
 */
export interface ThreadLease {
  readonly token: string;
  readonly pid: number;
  readonly seconds: number;
  markReleased(): void;
}

/** Thrown by a leased work's first statement, which changed nothing, when another live holder has the lease. */
export class LeaseBusyError extends Error {
  constructor() {
    super("the thread's lease is held");
  }
}

/** Serializes the chats of one thread: a turn (user message, reply) never interleaves with another. */
export interface ThreadLocks {
  withLock<T>(threadId: string, work: () => Promise<T>): Promise<T>;
  /**
   * Serializes like `withLock`, with one round trip less: `work`'s own first statement takes the lease it is given
   * (null where the lock is in-process) or throws LeaseBusyError, and `work` runs again once the lease is free.
   */
  withLeasedWork<T>(threadId: string, work: (lease: ThreadLease | null) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}
