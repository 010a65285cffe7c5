import type { Role } from "../history/messages-repository.js";

export type HistoryMessage = { role: Role; content: string };

interface Remembered {
  /** The conversation's latest messages, oldest first. */
  history: HistoryMessage[];
  /** Whether `history` is the whole conversation, rather than only its latest messages. */
  whole: boolean;
  /** The thread's last event when this was remembered (the reply's): a later one means another writer. */
  eventSeq: number;
  size: number;
}

/**
 * The history of each thread's active conversation as this instance's last turn on it left it, so that a streamed
 * turn can ask the model before its first statement's rows are back. It is a guess, never a source: a turn keeps
 * what the model said from it only if the statement's history is the same (see ChatService). A thread event from
 * another writer drops the thread's entry (one seen late costs an aborted model call, not a wrong reply); a turn
 * takes its thread's entry out, and puts one back only when it succeeds. Bounded by the estimated size of its
 * entries (0 turns it off), the oldest written evicted first.
 */
export class RecentHistories {
  private readonly entries = new Map<string, Remembered>();
  private totalSize = 0;

  constructor(
    private readonly maxSize: number,
    /** False while thread events cannot be trusted to arrive (the listener is down): nothing is then guessed. */
    private readonly live: () => boolean,
  ) {}

  /**
   * Removes the thread's entry and returns the history a turn's statement should read from it: the latest `limit`
   * messages before the turn, then `userMessage`; a new conversation's is `userMessage` alone. Undefined when this
   * instance cannot tell.
   */
  take(threadId: string, turn: { startNewConversation: boolean; userMessage: HistoryMessage | null; limit: number }): HistoryMessage[] | undefined {
    const entry = this.entries.get(threadId);
    if (entry) this.remove(threadId, entry);
    if (this.maxSize === 0 || !this.live()) return undefined;
    const added = turn.userMessage ? [turn.userMessage] : [];
    if (turn.startNewConversation) return added;
    if (!entry || (!entry.whole && entry.history.length < turn.limit)) return undefined;
    return [...(turn.limit === 0 ? [] : entry.history.slice(-turn.limit)), ...added];
  }

  /** What a turn that succeeded leaves: the history its statement read (`whole` when it read all of it), then the reply. */
  remember(threadId: string, turn: { history: HistoryMessage[]; whole: boolean; reply: HistoryMessage; limit: number; eventSeq: number }): void {
    if (this.maxSize === 0 || !this.live()) return;
    const all = [...turn.history, turn.reply];
    const history = turn.limit === 0 ? [] : all.slice(-turn.limit);
    const entry: Remembered = { history, whole: turn.whole && history.length === all.length, eventSeq: turn.eventSeq, size: sizeOf(history) };
    const previous = this.entries.get(threadId);
    if (previous) this.remove(threadId, previous);
    if (entry.size > this.maxSize) return;
    this.entries.set(threadId, entry);
    this.totalSize += entry.size;
    for (const [oldest, old] of this.entries) {
      if (this.totalSize <= this.maxSize) break;
      this.remove(oldest, old);
    }
  }

  /** A thread event (`seq`) was announced: the entry no longer holds when someone else wrote after it. */
  heard(threadId: string, seq: number): void {
    const entry = this.entries.get(threadId);
    if (entry && seq > entry.eventSeq) this.remove(threadId, entry);
  }

  forget(threadId: string): void {
    const entry = this.entries.get(threadId);
    if (entry) this.remove(threadId, entry);
  }

  clear(): void {
    this.entries.clear();
    this.totalSize = 0;
  }

  private remove(threadId: string, entry: Remembered): void {
    this.entries.delete(threadId);
    this.totalSize -= entry.size;
  }
}

/** Estimated memory: two bytes a character, plus each message's object and the entry's own. */
function sizeOf(history: readonly HistoryMessage[]): number {
  let size = 256;
  for (const message of history) size += 2 * message.content.length + 64;
  return size;
}

/** Whether two histories are the same messages in the same order. */
export function sameHistory(a: readonly HistoryMessage[], b: readonly HistoryMessage[]): boolean {
  if (a.length !== b.length) return false;
  for (let index = 0; index < a.length; index++) {
    if (a[index]!.role !== b[index]!.role || a[index]!.content !== b[index]!.content) return false;
  }
  return true;
}
