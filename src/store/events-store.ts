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

  /**
   * A `message.created` event stored since migration 012 refers to its message (`message_seq`): its payload is built
   * here from the message row, as the copy stored before was built, and `payload` holds what the event adds to it.
   */
  async after(threadId: string, seq: number, limit: number): Promise<ThreadEventRecord[]> {
    return this.db.query<ThreadEventRecord>(
      `SELECT e.seq, e.type,
              CASE WHEN e.message_seq IS NULL THEN e.payload
                   ELSE jsonb_build_object('message', CASE WHEN m.id IS NOT NULL THEN jsonb_build_object(
                          'message_id', m.id, 'role', m.role, 'message', m.content, 'conversation_id', m.conversation_id) || coalesce(e.payload, '{}') END)
              END AS payload
         FROM (SELECT seq, type, payload, message_seq FROM thread_events WHERE thread_id = $1 AND seq > $2 ORDER BY seq LIMIT $3) e
         LEFT JOIN messages m ON m.thread_id = $1 AND m.seq = e.message_seq
        ORDER BY e.seq`,
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
