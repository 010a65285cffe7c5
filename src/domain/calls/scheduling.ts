import type { Queryable } from "../shared/database.js";

/** What the durable jobs of calls run; both must be idempotent, as a job may be delivered more than once. */
export interface CallJobHandlers {
  /** A scheduled call's time has come. */
  startScheduledCall(callId: string): Promise<void>;
  /** An ended call's transcript, recording and analysis are to be produced. */
  processEndedCall(callId: string): Promise<void>;
}

/**
 * Durable jobs for calls, kept in the database: they survive a restart, and with several instances on one
 * PostgreSQL each job is taken by one of them. Jobs are added inside the caller's transaction, so that a call and
 * its job are committed (or not) together.
 */
export interface CallJobs {
  start(handlers: CallJobHandlers): Promise<void>;
  scheduleStart(callId: string, at: Date, tx: Queryable): Promise<void>;
  enqueueProcessing(callId: string, tx: Queryable): Promise<void>;
  /** Tells this instance's processing worker to look now rather than at its next poll (after the enqueuing commit). */
  wakeProcessing(): void;
  stop(): Promise<void>;
}
