import type { Logger } from "pino";
import type { Db, Queryable } from "../shared/database.js";
import { threadEventsChannel, type EventsRepository, type ThreadEventRecord } from "./events-repository.js";

export type EventType = "web_call.ready" | "call.updated" | "call.analyzed" | "message.created" | "tool.called";

/** What a client receives: `type`, the thread's `seq`, and the event's own fields. */
export type ThreadEvent = { type: string; seq: number } & Record<string, unknown>;

interface Subscriber {
  threadId: string;
  lastSeq: number;
  ready: boolean;
  pumping: boolean;
  again: boolean;
  deliver(event: ThreadEvent): void;
  fail(error: unknown): void;
}

const pageSize = 200;
const pruneEveryMs = 10 * 60_000;
const pruneBatch = 10_000;

/**
 * The thread events stream. Events are rows with a per-thread `seq`; a NOTIFY after commit (PostgreSQL LISTEN/NOTIFY,
 * or PGlite's in-process equivalent) only wakes the subscribers of that thread on every instance, which then read
 * the rows after the last seq they delivered. Delivery is therefore in order and without gaps, whatever order the
 * notifications arrive in, and a missed notification is made good by the next one or by `poke`.
 */
export class EventsService {
  private readonly subscribers = new Map<string, Set<Subscriber>>();
  private unlisten: (() => Promise<void>) | undefined;
  private unwatchListener: (() => void) | undefined;
  private pruning: ReturnType<typeof setInterval> | undefined;

  constructor(
    private readonly db: Db,
    private readonly store: EventsRepository,
    private readonly log: Logger,
    /** Events older than this are deleted (a replay reaches back no further); 0 keeps them all. */
    private readonly retentionHours: number,
  ) {}

  async start(): Promise<void> {
    this.unlisten = await this.db.listen(threadEventsChannel, (payload) => {
      const threadId = payload.slice(0, payload.lastIndexOf(" "));
      for (const subscriber of this.subscribers.get(threadId) ?? []) this.pump(subscriber);
    });
    // Notifications sent while the listener was reconnecting are lost: every subscriber re-reads its thread's log.
    this.unwatchListener = this.db.onListenerState((listening) => {
      if (!listening) return;
      for (const set of this.subscribers.values()) for (const subscriber of set) this.pump(subscriber);
    });
    if (this.retentionHours > 0) {
      this.pruning = setInterval(() => void this.prune(), pruneEveryMs);
      this.pruning.unref();
    }
  }

  /** Deletes the events past retention, in batches; every instance may run it, as deletes of deleted rows are no-ops. */
  async prune(): Promise<number> {
    let deleted = 0;
    try {
      let batch: number;
      do {
        batch = await this.store.deleteOlderThan(this.retentionHours, pruneBatch);
        deleted += batch;
      } while (batch === pruneBatch);
    } catch (error) {
      this.log.warn({ err: error }, "deleting old thread events failed");
    }
    return deleted;
  }

  async stop(): Promise<void> {
    clearInterval(this.pruning);
    await this.unlisten?.();
    this.unwatchListener?.();
    this.subscribers.clear();
  }

  /** Appends an event inside the caller's transaction; subscribers hear of it when that transaction commits. */
  append(threadId: string, type: EventType, payload: Record<string, unknown>, tx: Queryable): Promise<number> {
    return this.store.append(threadId, type, payload, tx);
  }

  async publish(threadId: string, type: EventType, payload: Record<string, unknown>): Promise<number> {
    return this.db.transaction((tx) => this.store.append(threadId, type, payload, tx));
  }

  /**
   * Delivers the thread's events with seq > `after` (replay), then live ones; without `after`, only events after
   * the moment of subscribing. Returns the unsubscribe function and `poke`, which re-reads the log (heartbeats call
   * it, so that a notification lost with a dropped database connection delays an event rather than losing it).
   * A read that fails ends the subscription and calls `fail`, so that its client can reconnect from its last seq.
   */
  async subscribe(
    threadId: string,
    after: number | undefined,
    deliver: (event: ThreadEvent) => void,
    fail: (error: unknown) => void,
  ): Promise<{ close(): void; poke(): void }> {
    const subscriber: Subscriber = { threadId, lastSeq: after ?? 0, ready: false, pumping: false, again: false, deliver, fail };
    let set = this.subscribers.get(threadId);
    if (!set) {
      set = new Set();
      this.subscribers.set(threadId, set);
    }
    set.add(subscriber);
    if (after === undefined) subscriber.lastSeq = await this.store.lastSeq(threadId);
    subscriber.ready = true;
    this.pump(subscriber);
    return { close: () => this.unsubscribe(subscriber), poke: () => this.pump(subscriber) };
  }

  private unsubscribe(subscriber: Subscriber): void {
    const current = this.subscribers.get(subscriber.threadId);
    current?.delete(subscriber);
    if (current?.size === 0) this.subscribers.delete(subscriber.threadId);
  }

  private pump(subscriber: Subscriber): void {
    if (!subscriber.ready || subscriber.pumping) {
      subscriber.again = true;
      return;
    }
    subscriber.pumping = true;
    void (async () => {
      try {
        do {
          subscriber.again = false;
          let rows: ThreadEventRecord[];
          do {
            rows = await this.store.after(subscriber.threadId, subscriber.lastSeq, pageSize);
            for (const row of rows) {
              subscriber.lastSeq = row.seq;
              subscriber.deliver({ type: row.type, seq: row.seq, ...row.payload });
            }
          } while (rows.length === pageSize);
        } while (subscriber.again);
      } catch (error) {
        this.log.warn({ err: error, threadId: subscriber.threadId }, "reading thread events failed");
        this.unsubscribe(subscriber);
        subscriber.fail(error);
      } finally {
        subscriber.pumping = false;
      }
    })();
  }
}
