import type { Queryable } from "../domain/shared/database.js";

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
