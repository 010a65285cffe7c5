import type { Queryable } from "../shared/database.js";

export interface ThreadEventRecord {
  seq: number;
  type: string;
  payload: Record<string, unknown>;
}

/** Channel on which a committed event is announced as `<thread id> <seq>`; receivers read the rows themselves. */
export const threadEventsChannel = "parley_thread_events";

/** The per-thread, gap-free event log behind the events WebSocket. */
export interface EventsRepository {
  /**
   * Appends an event inside the caller's transaction. The thread row's counter allocates `seq` atomically; the
   * NOTIFY is sent by PostgreSQL only when that transaction commits, so a receiver always finds the row.
   */
  append(threadId: string, type: string, payload: Record<string, unknown>, tx: Queryable): Promise<number>;
  after(threadId: string, seq: number, limit: number): Promise<ThreadEventRecord[]>;
  /** Deletes up to `limit` events older than `hours`; returns how many. Any thread's: retention is a server setting. */
  deleteOlderThan(hours: number, limit: number): Promise<number>;
  lastSeq(threadId: string): Promise<number>;
}
