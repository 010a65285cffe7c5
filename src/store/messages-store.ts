import type { Queryable } from "./db.js";

export type Role = "user" | "assistant";

export interface MessageRecord {
  id: string;
  seq: number;
  conversation_id: number;
  role: Role;
  content: string;
  extras: Record<string, unknown>;
  created_at: Date;
  conversation_ended_at: Date | null;
}

const messageColumns = `m.id, m.seq, m.conversation_id, m.role, m.content, m.extras, m.created_at, c.ended_at AS conversation_ended_at`;
const fromMessages = `FROM messages m JOIN conversations c ON c.thread_id = m.thread_id AND c.conversation_id = m.conversation_id`;

/** Messages are numbered per thread by `seq` (1, 2, 3… with no gaps): the total order every page and cursor uses. */
export class MessagesStore {
  constructor(private readonly db: Queryable) {}

  /** The latest `limit` messages of a conversation, oldest first. */
  async latestOfConversation(threadId: string, conversationId: number, limit: number): Promise<MessageRecord[]> {
    if (limit <= 0) return [];
    const rows = await this.db.query<MessageRecord>(
      `SELECT ${messageColumns} ${fromMessages}
        WHERE m.thread_id = $1 AND m.conversation_id = $2 ORDER BY m.seq DESC LIMIT $3`,
      [threadId, conversationId, limit],
    );
    return rows.reverse();
  }

  /**
   * Up to `limit` messages with seq ≤ `atMost` (or the latest), newest first. The page read must run on the prepared
   * statement's generic plan, planned once per connection: with `$2 IS NULL OR seq <= $2`, or with the limit as a
   * parameter (costed as a tenth of the thread), the generic plan is costed far above a custom one and PostgreSQL
   * planned the statement again at every execution, most of its time. So there is one statement without a cursor
   * and one with, and the limit (a small validated integer: one statement text per page size) is written into it.
   */
  async olderThanOrAt(threadId: string, atMost: number | null, limit: number): Promise<MessageRecord[]> {
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError(`page limit ${limit} is not a positive integer`);
    if (atMost === null) {
      return this.db.query<MessageRecord>(`SELECT ${messageColumns} ${fromMessages} WHERE m.thread_id = $1 ORDER BY m.seq DESC LIMIT ${limit}`, [threadId]);
    }
    return this.db.query<MessageRecord>(
      `SELECT ${messageColumns} ${fromMessages} WHERE m.thread_id = $1 AND m.seq <= $2 ORDER BY m.seq DESC LIMIT ${limit}`,
      [threadId, atMost],
    );
  }

  /** Up to `limit` messages with seq > `after`, oldest first. */
  async newerThan(threadId: string, after: number, limit: number): Promise<MessageRecord[]> {
    return this.db.query<MessageRecord>(
      `SELECT ${messageColumns} ${fromMessages}
        WHERE m.thread_id = $1 AND m.seq > $2 ORDER BY m.seq ASC LIMIT $3`,
      [threadId, after, limit],
    );
  }

  /**
   * Seqs of messages containing `needle` (case-insensitive), newest first, below `before` when given. The trigram
   * index covers the messages the indexer has moved into `message_search` (migration 007); those still queued are
   * matched directly, so that a message is found from the moment it is stored.
   */
  async searchSeqs(threadId: string, needle: string, before: number | null, limit: number): Promise<number[]> {
    const pattern = `%${needle.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    const rows = await this.db.query<{ seq: number }>(
      `SELECT seq FROM (
         (SELECT s.seq FROM message_search s
           WHERE s.thread_id = $1 AND s.content ILIKE $2 AND ($3::bigint IS NULL OR s.seq < $3)
           ORDER BY s.seq DESC LIMIT $4)
         UNION
         (SELECT m.seq FROM message_search_queue q JOIN messages m ON m.thread_id = q.thread_id AND m.seq = q.seq
           WHERE q.thread_id = $1 AND m.content ILIKE $2 AND ($3::bigint IS NULL OR q.seq < $3)
           ORDER BY m.seq DESC LIMIT $4)
       ) AS found
       ORDER BY seq DESC LIMIT $4`,
      [threadId, pattern, before, limit],
    );
    return rows.map((row) => row.seq);
  }

  /**
   * Every message whose seq lies in one of the inclusive ranges, oldest first. The ranges are expanded into the
   * wanted seqs and joined by equality, so that the planner sees a few single-row index lookups: with the ranges
   * themselves it cannot know their width and chose to scan the whole thread (0.6 s at 1,000,000 messages). The
   * conversation's end is a per-row key lookup for the same reason (a join hashed every conversation of the thread).
   */
  async inRanges(threadId: string, ranges: [number, number][]): Promise<MessageRecord[]> {
    const merged = mergeRanges(ranges);
    if (merged.length === 0) return [];
    return this.db.query<MessageRecord>(
      `SELECT m.id, m.seq, m.conversation_id, m.role, m.content, m.extras, m.created_at,
              (SELECT c.ended_at FROM conversations c WHERE c.thread_id = m.thread_id AND c.conversation_id = m.conversation_id)
                AS conversation_ended_at
         FROM (SELECT generate_series(r.lo, r.hi) AS seq FROM unnest($2::bigint[], $3::bigint[]) AS r(lo, hi)) wanted
         JOIN messages m ON m.thread_id = $1 AND m.seq = wanted.seq
        ORDER BY m.seq`,
      [threadId, merged.map((range) => range[0]), merged.map((range) => range[1])],
    );
  }
}

/** Overlapping or touching ranges joined, so that no message is read twice. */
function mergeRanges(ranges: [number, number][]): [number, number][] {
  const merged: [number, number][] = [];
  for (const [lo, hi] of [...ranges].sort((a, b) => a[0] - b[0])) {
    const last = merged[merged.length - 1];
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else merged.push([lo, hi]);
  }
  return merged;
}

export class ConversationsStore {
  constructor(private readonly db: Queryable) {}

  /**
   * The conversation the next message belongs to: the active one, or (when there is none, or `startNew`) a new one,
   * numbered from 1 per thread. Runs inside the caller's transaction so that the thread row lock orders it.
   */
  async current(threadId: string, projectId: string | null, startNew: boolean, tx: Queryable): Promise<{ conversationId: number; opened: boolean }> {
    const [thread] = await tx.query<{ active_conversation_id: number | null; last_conversation_id: number }>(
      "SELECT active_conversation_id, last_conversation_id FROM threads WHERE id = $1 FOR UPDATE",
      [threadId],
    );
    if (!thread) throw new Error(`thread ${threadId} vanished`);
    if (thread.active_conversation_id !== null && !startNew) return { conversationId: thread.active_conversation_id, opened: false };
    if (thread.active_conversation_id !== null) {
      await tx.query("UPDATE conversations SET ended_at = clock_timestamp() WHERE thread_id = $1 AND conversation_id = $2", [
        threadId,
        thread.active_conversation_id,
      ]);
    }
    const conversationId = thread.last_conversation_id + 1;
    await tx.query("INSERT INTO conversations (thread_id, conversation_id, project_id) VALUES ($1, $2, $3)", [threadId, conversationId, projectId]);
    await tx.query("UPDATE threads SET active_conversation_id = $2, last_conversation_id = $2 WHERE id = $1", [threadId, conversationId]);
    return { conversationId, opened: true };
  }

  /** Ends the active conversation; returns its id, or null when none was active. */
  async endActive(threadId: string, tx: Queryable = this.db): Promise<number | null> {
    const [row] = await tx.query<{ conversation_id: number }>(
      `WITH thread AS (SELECT active_conversation_id FROM threads WHERE id = $1 AND active_conversation_id IS NOT NULL FOR UPDATE),
            ended AS (UPDATE conversations c SET ended_at = clock_timestamp() FROM thread
                       WHERE c.thread_id = $1 AND c.conversation_id = thread.active_conversation_id RETURNING c.conversation_id)
       UPDATE threads t SET active_conversation_id = NULL FROM ended WHERE t.id = $1 RETURNING ended.conversation_id`,
      [threadId],
    );
    return row?.conversation_id ?? null;
  }

  /** The latest conversation of the thread with its project, or undefined when the thread has none. */
  async latest(threadId: string): Promise<{ conversation_id: number; project_id: string | null; ended_at: Date | null } | undefined> {
    const [row] = await this.db.query<{ conversation_id: number; project_id: string | null; ended_at: Date | null }>(
      "SELECT conversation_id, project_id, ended_at FROM conversations WHERE thread_id = $1 ORDER BY conversation_id DESC LIMIT 1",
      [threadId],
    );
    return row;
  }
}

export class UsageStore {
  constructor(private readonly db: Queryable) {}

  /** Voice cost is computed in SQL from exact decimals: seconds / 60 × price per minute. */
  async addVoice(threadId: string, seconds: number, pricePerMinuteUsd: number, tx: Queryable = this.db): Promise<void> {
    await tx.query(
      `UPDATE threads SET voice_seconds = voice_seconds + $2::numeric,
              voice_cost = voice_cost + round($2::numeric / 60 * $3::numeric, 8) WHERE id = $1`,
      [threadId, String(seconds), String(pricePerMinuteUsd)],
    );
  }
}
