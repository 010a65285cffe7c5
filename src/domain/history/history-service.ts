import type { MessageRecord, MessagesRepository } from "./messages-repository.js";
import type { ConversationsRepository } from "../chat/conversations-repository.js";
import { decodeCursor, encodeCursor } from "../shared/cursors.js";
import { changeTags } from "../cache/invalidation.js";
import type { ProjectService } from "../projects/project-service.js";
import type { TaggedCache } from "../cache/tagged-cache.js";
import type { ThreadService } from "../threads/thread-service.js";
import type { ThreadRecord } from "../threads/threads-repository.js";

export interface MessageView {
  message_id: string;
  role: string;
  message: string;
  conversation_id: number;
  timestamp: number;
  extras: Record<string, unknown>;
  conversation_end_time: string | null;
}

export interface SearchMatchView {
  message_id: string;
  prev_cursor: string | null;
  next_cursor: string | null;
  context: Omit<MessageView, "extras">[];
}

export function messageView(record: MessageRecord): MessageView {
  return {
    message_id: record.id,
    role: record.role,
    message: record.content,
    conversation_id: record.conversation_id,
    timestamp: record.created_at.getTime(),
    extras: record.extras,
    conversation_end_time: record.conversation_ended_at ? record.conversation_ended_at.toISOString() : null,
  };
}

export interface PageQuery {
  cursor?: string;
  newer: boolean;
  limit: number;
}

/** A page request without a cursor: the latest messages. */
export const latestPageQuery = { newer: false, limit: 20 } satisfies PageQuery;

/**
 * The cache key of a page. Its parts are joined by newlines: no stored key has one inside a part (a thread id or
 * cursor with a newline is refused, so never stored), and a looked-up part with one adds a separator, so that it
 * cannot equal a stored key. A given cursor, even an empty one, is marked apart from none. Cheaper than JSON on
 * every cached read.
 */
function pageKey(organizationId: string, threadId: string, query: PageQuery): string {
  return `${organizationId}\n${threadId}\n${query.cursor === undefined ? "" : `c${query.cursor}`}\n${query.newer}\n${query.limit}`;
}

export interface HistoryPage {
  messages: MessageView[];
  pagination: { cursor: string | null };
  is_locked: boolean;
}

/** Keyset pages over the thread's messages (see cursors.ts) and substring search with context. */
export class HistoryService {
  constructor(
    private readonly threads: ThreadService,
    private readonly projects: ProjectService,
    private readonly conversations: ConversationsRepository,
    private readonly messages: MessagesRepository,
    /** Rendered pages by organization, thread and query, invalidated by thread and by organization. */
    private readonly renderedPages: TaggedCache<Buffer>,
  ) {}

  /**
   * A page as `render` turns it into the response body, from the cache when this instance holds it. A page shows
   * the thread's messages, their conversations' end times and `is_locked` (the organization's project settings):
   * whatever changes those invalidates the thread's or the organization's pages (see `Invalidations`).
   */
  async renderedPage(organizationId: string, threadId: string, query: PageQuery, render: (page: HistoryPage) => Buffer): Promise<Buffer> {
    return this.renderedPages.load(pageKey(organizationId, threadId, query), [changeTags.thread(threadId), changeTags.organization(organizationId)], async () =>
      render(await this.page(organizationId, threadId, query)),
    );
  }

  /** The latest page (no cursor, default limit) as this instance holds it rendered, if it does: no database read. */
  rememberedLatestPage(organizationId: string, threadId: string): Buffer | undefined {
    return this.renderedPages.get(pageKey(organizationId, threadId, latestPageQuery));
  }

  async page(
    organizationId: string,
    threadId: string,
    query: PageQuery,
  ): Promise<HistoryPage> {
    const thread = await this.threads.get(organizationId, threadId);
    const position = query.cursor === undefined ? null : decodeCursor("history", thread.id, query.cursor);
    let page: MessageRecord[];
    let cursor: string | null = null;
    if (query.newer && position !== null) {
      const rows = await this.messages.newerThan(thread.id, position, query.limit + 1);
      page = rows.slice(0, query.limit);
      if (rows.length > query.limit) cursor = encodeCursor("history", thread.id, page[page.length - 1]!.seq);
    } else {
      const rows = await this.messages.olderThanOrAt(thread.id, position, query.limit + 1);
      page = rows.slice(0, query.limit).reverse();
      if (rows.length > query.limit) cursor = encodeCursor("history", thread.id, page[0]!.seq - 1);
    }
    return { messages: page.map(messageView), pagination: { cursor }, is_locked: await this.isLocked(thread) };
  }

  /** Locked when the applicable project locks on conversation end and the thread's latest conversation has ended. */
  private async isLocked(thread: ThreadRecord): Promise<boolean> {
    // The thread row already tells whether the latest conversation has ended; only then is the project read.
    if (thread.last_conversation_id === 0 || thread.active_conversation_id !== null) return false;
    const latest = await this.conversations.latest(thread.id);
    if (!latest || latest.ended_at === null) return false;
    const projectId = latest.project_id ?? thread.project_id;
    if (!projectId) return false;
    const project = await this.projects.findById(thread.organization_id, projectId);
    if (!project) return false;
    return (await this.projects.resolve(project)).config.conversation.lock_on_end;
  }

  async search(
    organizationId: string,
    threadId: string,
    query: { query: string; cursor?: string; limit: number; context: number },
  ): Promise<{ matches: SearchMatchView[]; pagination: { cursor: string | null } }> {
    const thread = await this.threads.get(organizationId, threadId);
    const before = query.cursor === undefined ? null : decodeCursor("search", thread.id, query.cursor);
    const seqs = await this.messages.searchSeqs(thread.id, query.query, before, query.limit + 1);
    const matches = seqs.slice(0, query.limit);
    // Each context is read one message further than it shows: that message's presence says whether anything follows
    // (seqs are gap-free), without a separate read of the thread's last seq that could race with new messages.
    const ranges = matches.map((seq): [number, number] => [Math.max(1, seq - query.context), seq + query.context + 1]);
    const bySeq = new Map((await this.messages.inRanges(thread.id, ranges)).map((record) => [record.seq, record]));
    const views = matches.map((seq) => {
      const low = Math.max(1, seq - query.context);
      const context: Omit<MessageView, "extras">[] = [];
      for (let s = low; s <= seq + query.context && bySeq.has(s); s += 1) {
        const { extras: _extras, ...rest } = messageView(bySeq.get(s)!);
        context.push(rest);
      }
      const high = low + context.length - 1;
      return {
        message_id: bySeq.get(seq)!.id,
        prev_cursor: low > 1 ? encodeCursor("history", thread.id, low - 1) : null,
        next_cursor: bySeq.has(high + 1) ? encodeCursor("history", thread.id, high) : null,
        context,
      };
    });
    const cursor = seqs.length > query.limit ? encodeCursor("search", thread.id, matches[matches.length - 1]!) : null;
    return { matches: views, pagination: { cursor } };
  }
}
