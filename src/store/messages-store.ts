import type { Queryable } from "../domain/shared/database.js";
import type { MessageRecord } from "../domain/history/messages-repository.js";

const messageColumns = `m.id, m.seq, m.conversation_id, m.role, m.content, m.extras, m.created_at, c.ended_at AS conversation_ended_at`;
/** The end of a message's conversation, looked up by key for each message. */
const conversationEndedAt = `(SELECT c.ended_at FROM conversations c WHERE c.thread_id = m.thread_id AND c.conversation_id = m.conversation_id)
                              AS conversation_ended_at`;
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
   * Up to `limit` messages with seq ≤ `atMost` (or the latest), newest first: `parley_message_page` (store/functions/),
   * which runs on plans kept for the connection (as a prepared statement it was planned again at every read of a long
   * thread), and gives the conversation's end only where the conversation changes from the newer message's.
   */
  async olderThanOrAt(threadId: string, atMost: number | null, limit: number): Promise<MessageRecord[]> {
    const rows = await this.db.query<MessageRecord>(
      "SELECT id, seq, conversation_id, role, content, extras, created_at, conversation_ended_at FROM parley_message_page($1, $2, $3)",
      [threadId, atMost, limit],
    );
    return copyRunEnds(rows);
  }

  /** Up to `limit` messages with seq > `after`, oldest first: `parley_message_page_after` (store/functions/), as above. */
  async newerThan(threadId: string, after: number, limit: number): Promise<MessageRecord[]> {
    const rows = await this.db.query<MessageRecord>(
      "SELECT id, seq, conversation_id, role, content, extras, created_at, conversation_ended_at FROM parley_message_page_after($1, $2, $3)",
      [threadId, after, limit],
    );
    return copyRunEnds(rows);
  }

  /** Seqs of messages containing `needle` (case-insensitive), newest first, below `before` when given (trigram index). */
  async searchSeqs(threadId: string, needle: string, before: number | null, limit: number): Promise<number[]> {
    const pattern = `%${needle.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    const rows = await this.db.query<{ seq: number }>(
      `SELECT m.seq FROM messages m
        WHERE m.thread_id = $1 AND m.content ILIKE $2 AND ($3::bigint IS NULL OR m.seq < $3)
        ORDER BY m.seq DESC LIMIT $4`,
      [threadId, pattern, before, limit],
    );
    return rows.map((row) => row.seq);
  }

  /**
   * Every message whose seq lies in one of the inclusive ranges, oldest first. The ranges are expanded here into the
   * wanted seqs, joined by equality, so that the planner sees a few single-row index lookups: with the ranges it cannot
   * know their width and chose to scan the whole thread (0.6 s at 1,000,000 messages), and with `generate_series`
   * in SQL (costed at 1,000 rows a range) it hashed the whole thread when that was below a few hundred thousand
   * messages (27 ms at 20,000, 195 ms at 100,000). The ranges are a search page's contexts: a few hundred seqs at most.
   * The conversation's end is a per-row key lookup for the same reason (a join hashed every conversation of the thread).
   */
  async inRanges(threadId: string, ranges: [number, number][]): Promise<MessageRecord[]> {
    const wanted = mergeRanges(ranges).flatMap(([lo, hi]) => Array.from({ length: hi - lo + 1 }, (_, offset) => lo + offset));
    if (wanted.length === 0) return [];
    return this.db.query<MessageRecord>(
      `SELECT m.id, m.seq, m.conversation_id, m.role, m.content, m.extras, m.created_at, ${conversationEndedAt}
         FROM unnest($2::bigint[]) AS wanted(seq)
         JOIN messages m ON m.thread_id = $1 AND m.seq = wanted.seq
        ORDER BY m.seq`,
      [threadId, wanted],
    );
  }
}

/** Copies each run's conversation end, read on the run's first message, down the rest of the run. */
function copyRunEnds(rows: MessageRecord[]): MessageRecord[] {
  for (let i = 1; i < rows.length; i++) {
    const previous = rows[i - 1]!;
    if (rows[i]!.conversation_id === previous.conversation_id) rows[i]!.conversation_ended_at = previous.conversation_ended_at;
  }
  return rows;
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
