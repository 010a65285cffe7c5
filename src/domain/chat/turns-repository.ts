import type { Role } from "../history/messages-repository.js";
import type { ThreadLease } from "../threads/thread-locks.js";

export interface OpenedTurn {
  conversationId: number;
  /** The conversation's latest messages, oldest first, the user's new message included. */
  history: { role: Role; content: string }[];
}

/**
 * The writes of one chat turn as two statements (the SQL functions `parley_open_turn` and `parley_close_turn`, each in
 * its file in src/store/functions/): `open` before the model is called, `close` after. Each is one round trip and
 * one transaction, so that a turn costs the database two commits; the events they append (and a released lease)
 * are announced once each statement has returned.
 */
export interface TurnsRepository {
  /**
   * Takes the lease (when given), finds or opens the conversation, stores the user's message (when given) with its
   * event, and reads the history. Throws LeaseBusyError, having changed nothing, while another holder has the lease.
   */
  open(turn: {
    threadId: string;
    projectId: string | null;
    startNewConversation: boolean;
    userMessage: {
      id: string;
      content: string;
      extras: Record<string, unknown>;
    } | null;
    historyLimit: number;
  }, lease: ThreadLease | null): Promise<OpenedTurn>;
  /**
   * `open`, answered as soon as its statement has run, with the commit still flushing: `durable` settles once the
   * user's message is durable, and rejects, the turn's writes undone, when the commit fails. The message's event is
   * announced once it is durable.
   */
  openFlushing(turn: Parameters<TurnsRepository["open"]>[0], lease: ThreadLease | null): Promise<OpenedTurn & { durable: Promise<void> }>;
  /** Stores the reply with its event and bills it; releases the lease when given. Resolves with the event's number. */
  close(turn: {
    threadId: string;
    conversationId: number;
    reply: {
      id: string;
      content: string;
      extras: Record<string, unknown>;
    };
    priceUsd: number;
  }, lease: ThreadLease | null): Promise<{ eventSeq: number }>;
}
