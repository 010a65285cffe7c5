import type { MessagesRepository } from "./messages-repository.js";
import type { ThreadService } from "../threads/thread-service.js";

export interface LegacyMessage {
  message_id: string;
  role: "user" | "AI";
  message: string;
  conversation_id: string;
}

/**
 * The earlier generation's page-numbered history. Messages are numbered 1..N per thread without gaps, so page P is
 * the seq range ((P-1)·limit, P·limit]: an index range scan, not an OFFSET that grows with the page number.
 */
export async function legacyConversations(
  threads: ThreadService,
  messages: MessagesRepository,
  organizationId: string,
  threadId: string,
  page: number,
  limit: number,
): Promise<{ messages: LegacyMessage[]; pagination: { current_page: number; total_pages: number; total_items: number } }> {
  const thread = await threads.get(organizationId, threadId);
  const total = thread.last_message_seq;
  const first = (page - 1) * limit + 1;
  const rows = first > total ? [] : await messages.inRanges(thread.id, [[first, Math.min(total, first + limit - 1)]]);
  return {
    messages: rows.map((row) => ({
      message_id: row.id,
      role: row.role === "assistant" ? "AI" : "user",
      message: row.content,
      conversation_id: String(row.conversation_id),
    })),
    pagination: { current_page: page, total_pages: Math.ceil(total / limit), total_items: total },
  };
}
