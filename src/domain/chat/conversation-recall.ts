import { cacheChannel, changeTags } from "../cache/invalidation.js";
import { threadEventsChannel } from "../events/events-repository.js";
import type { Db } from "../shared/database.js";
import type { OpenedTurn } from "./turns-repository.js";

export type HistoryMessage = OpenedTurn["history"][number];

interface Recalled {
  organizationId: string;
  /** The conversation's latest messages after the turn, its reply included: one more than the turn's history limit at most. */
  history: HistoryMessage[];
  /** The number of the thread's last event when the turn ended (its reply's). */
  lastEventSeq: number;
  size: number;
}

const threadTagPrefix = changeTags.thread("");

/**
 * What this instance saw of a thread's active conversation at the end of the last turn it served there: the history
 * the thread's next turn will most likely read, so that a streamed turn can ask the model while its own statement
 * runs (ChatService). It is only a guess, checked against what that statement reads. A thread is forgotten as soon
 * as a change by another writer is heard (another instance's turn, by its event's number; any other write of its
 * messages, by its cache tag), so that a guess is seldom wrong, and everything is forgotten whenever notifications
 * may have been lost. Entries are kept by organization and thread, at most `maxSize` bytes of text, least recently
 * used first out.
 */
export class ConversationRecall {
  private readonly threads = new Map<string, Recalled>();
  private totalSize = 0;
  /** The turns that asked the model with a guess, by whether their statement then read the history guessed. */
  readonly guesses = { confirmed: 0, wrong: 0 };
  private readonly unlisteners: (() => Promise<void>)[] = [];
  private unwatch: (() => void) | undefined;

  constructor(
    private readonly db: Pick<Db, "listen" | "listening" | "onListenerState">,
    private readonly maxSize: number,
  ) {}

  async start(): Promise<void> {
    if (this.maxSize === 0) return;
    this.unwatch = this.db.onListenerState(() => this.clear());
    this.unlisteners.push(
      await this.db.listen(threadEventsChannel, (payload) => {
        const separator = payload.lastIndexOf(" ");
        const threadId = payload.slice(0, separator);
        const recalled = this.threads.get(threadId);
        if (recalled && Number(payload.slice(separator + 1)) > recalled.lastEventSeq) this.forget(threadId);
      }),
      await this.db.listen(cacheChannel, (tag) => {
        if (tag.startsWith(threadTagPrefix)) this.forget(tag.slice(threadTagPrefix.length));
      }),
    );
  }

  async stop(): Promise<void> {
    this.unwatch?.();
    for (const unlisten of this.unlisteners.splice(0)) await unlisten();
    this.clear();
  }

  /**
   * The history a turn of this user's message will read, as far as this instance knows: only the message in a new
   * conversation; undefined when nothing is known of the thread's active one.
   */
  predict(organizationId: string, threadId: string, userMessage: string, startNewConversation: boolean, historyLimit: number): HistoryMessage[] | undefined {
    const message: HistoryMessage = { role: "user", content: userMessage };
    if (startNewConversation) return [message];
    if (!this.db.listening) return undefined;
    const recalled = this.threads.get(threadId);
    if (!recalled || recalled.organizationId !== organizationId) return undefined;
    this.threads.delete(threadId);
    this.threads.set(threadId, recalled);
    return [...recalled.history, message].slice(-historyLimit);
  }

  /** Remembers the conversation as a turn left it: the history it read, its reply, and the thread's last event. */
  remember(organizationId: string, threadId: string, history: readonly HistoryMessage[], reply: string, lastEventSeq: number): void {
    if (this.maxSize === 0 || !this.db.listening) return;
    const previous = this.threads.get(threadId);
    this.forget(threadId);
    const kept = previous?.organizationId === organizationId ? movedOn(previous.history, history) : [...history];
    kept.push({ role: "assistant", content: reply });
    const size = kept.reduce((sum, message) => sum + 2 * message.content.length + 64, 256);
    if (size > this.maxSize) return;
    this.threads.set(threadId, { organizationId, history: kept, lastEventSeq, size });
    this.totalSize += size;
    for (const [oldest, entry] of this.threads) {
      if (this.totalSize <= this.maxSize) break;
      this.threads.delete(oldest);
      this.totalSize -= entry.size;
    }
  }

  get size(): number {
    return this.totalSize;
  }

  /** Counts a guess by whether the statement read the history guessed. */
  judged(confirmed: boolean): void {
    if (confirmed) this.guesses.confirmed += 1;
    else this.guesses.wrong += 1;
  }

  forget(threadId: string): void {
    const recalled = this.threads.get(threadId);
    if (!recalled) return;
    this.threads.delete(threadId);
    this.totalSize -= recalled.size;
  }

  private clear(): void {
    this.threads.clear();
    this.totalSize = 0;
  }
}

/**
 * `history` as a new array, made of the messages `held` already has wherever it is `held` moved on by one message
 * (its last, the turn's user's), as a thread's turns most often read it. The messages a turn read then die with the
 * turn, instead of each being copied by the garbage collector (and most promoted to the old generation) while the
 * thread's next turn is awaited: at 32 threads, every turn's history was.
 */
function movedOn(held: readonly HistoryMessage[], history: readonly HistoryMessage[]): HistoryMessage[] {
  const shared = history.length - 1;
  const start = held.length - shared;
  if (shared < 0 || start < 0) return [...history];
  for (let index = 0; index < shared; index++) {
    const before = held[start + index]!;
    const read = history[index]!;
    if (before.role !== read.role || before.content !== read.content) return [...history];
  }
  const kept = held.slice(start);
  kept.push(history[shared]!);
  return kept;
}

/** Whether two histories hold the same messages, in the same order. */
export function sameHistory(a: readonly HistoryMessage[], b: readonly HistoryMessage[]): boolean {
  return a.length === b.length && a.every((message, index) => message.role === b[index]!.role && message.content === b[index]!.content);
}
