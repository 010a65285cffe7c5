import type { Queryable } from "../shared/database.js";

export interface ConversationsRepository {
  /**
   * The conversation the next message belongs to: the active one, or (when there is none, or `startNew`) a new one,
   * numbered from 1 per thread. Runs inside the caller's transaction so that the thread row lock orders it.
   */
  current(threadId: string, projectId: string | null, startNew: boolean, tx: Queryable): Promise<{
    conversationId: number;
    opened: boolean;
  }>;
  /** Ends the active conversation; returns its id, or null when none was active. */
  endActive(threadId: string, tx?: Queryable): Promise<number | null>;
  /** The latest conversation of the thread with its project, or undefined when the thread has none. */
  latest(threadId: string): Promise<{
    conversation_id: number;
    project_id: string | null;
    ended_at: Date | null;
  } | undefined>;
}
