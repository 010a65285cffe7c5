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

/** Messages are numbered per thread by `seq` (1, 2, 3… with no gaps): the total order every page and cursor uses. */
export interface MessagesRepository {
  /** The latest `limit` messages of a conversation, oldest first. */
  latestOfConversation(threadId: string, conversationId: number, limit: number): Promise<MessageRecord[]>;
  /** Up to `limit` messages with seq ≤ `atMost` (or the latest), newest first. */
  olderThanOrAt(threadId: string, atMost: number | null, limit: number): Promise<MessageRecord[]>;
  /** Up to `limit` messages with seq > `after`, oldest first. */
  newerThan(threadId: string, after: number, limit: number): Promise<MessageRecord[]>;
  /** Seqs of messages containing `needle` (case-insensitive), newest first, below `before` when given. */
  searchSeqs(threadId: string, needle: string, before: number | null, limit: number): Promise<number[]>;
  /**
   * Every message whose seq lies in one of the inclusive ranges, oldest first. The ranges are expanded into the
   * wanted seqs and joined by equality, so that the planner sees a few single-row index lookups: with the ranges
   * themselves it cannot know their width and chose to scan the whole thread (0.6 s at 1,000,000 messages). The
   * conversation's end is a per-row key lookup for the same reason (a join hashed every conversation of the thread).
   */
  inRanges(threadId: string, ranges: [number, number][]): Promise<MessageRecord[]>;
}
