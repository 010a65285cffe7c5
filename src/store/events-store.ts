import { jsonParam } from "./db.js";
import { type Queryable } from "../domain/shared/database.js";
import type { ThreadEventRecord } from "../domain/events/events-repository.js";
import { threadEventsChannel } from "../domain/events/events-repository.js";

/** The per-thread, gap-free event log behind the events WebSocket. */
export class EventsStore {
  constructor(private readonly db: Queryable) {}

  /**
   * Appends an event inside the caller's transaction. The thread row's counter allocates `seq` atomically; the
   * NOTIFY is sent by PostgreSQL only when that transaction commits, so a receiver always finds the row.
   */
  async append(threadId: string, type: string, payload: Record<string, unknown>, tx: Queryable): Promise<number> {
    const [row] = await tx.query<{ seq: number }>(
      `WITH next AS (UPDATE threads SET last_event_seq = last_event_seq + 1 WHERE id = $1 RETURNING last_event_seq)
       INSERT INTO thread_events (thread_id, seq, type, payload) SELECT $1, next.last_event_seq, $2, $3 FROM next RETURNING seq`,
      [threadId, type, jsonParam(payload)],
    );
    if (!row) throw new Error(`thread ${threadId} vanished while appending an event`);
    await tx.query(`SELECT pg_notify('${threadEventsChannel}', $1)`, [`${threadId} ${row.seq}`]);
    return row.seq;
  }

  async after(threadId: string, seq: number, limit: number): Promise<ThreadEventRecord[]> {
    return this.db.query<ThreadEventRecord>(
      "SELECT seq, type, payload FROM thread_events WHERE thread_id = $1 AND seq > $2 ORDER BY seq LIMIT $3",
      [threadId, seq, limit],
    );
  }

  /** Deletes up to `limit` events older than `hours`; returns how many. Any thread's: retention is a server setting. */
  async deleteOlderThan(hours: number, limit: number): Promise<number> {
    const rows = await this.db.query(
      `DELETE FROM thread_events WHERE ctid = ANY (ARRAY(
         SELECT ctid FROM thread_events WHERE created_at < now() - make_interval(hours => $1) LIMIT $2))
       RETURNING 1`,
      [hours, limit],
    );
    return rows.length;
  }

  async lastSeq(threadId: string): Promise<number> {
    const [row] = await this.db.query<{ last_event_seq: number }>("SELECT last_event_seq FROM threads WHERE id = $1", [threadId]);
    return row?.last_event_seq ?? 0;
  }
}
