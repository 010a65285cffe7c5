import type { Logger } from "pino";
import type { Db } from "../shared/database.js";
import { threadEventsChannel } from "../events/events-repository.js";
import { TaggedCache } from "./tagged-cache.js";

/** Channel of the NOTIFYs sent by the cache triggers (store/functions/parley_notify_changed_*.sql): the tag of what changed. */
export const cacheChannel = "parley_cache";

export const changeTags = {
  thread: (id: string) => `thread:${id}`,
  /** What a chat turn reads of a thread (context, time zone, owner): not dropped by new messages or conversations. */
  threadSetup: (id: string) => `thread-setup:${id}`,
  organization: (id: string) => `organization:${id}`,
  apiKey: (id: string) => `api_key:${id}`,
  /** Any API key: for a read that learns which key it is only from the database. */
  anyApiKey: "api_key:*",
};

/** How long a write that waits to hear its own notification (a key revocation) waits at most. */
const hearTimeoutMs = 5_000;

/**
 * Keeps this instance's caches true to the database. Every write that changes what a cache shows makes PostgreSQL
 * NOTIFY its tag on commit (triggers, so that no write path can forget), which every instance's listener hears;
 * writes served here also invalidate at once (`changed`), before their response, so that a client reads its own
 * writes on this instance without waiting for the notification. While the listener is down notifications are
 * lost, so the caches are bypassed, and they are emptied when it drops and again when it is back.
 */
export class Invalidations {
  private readonly caches: Pick<TaggedCache<unknown>, "invalidate" | "clear">[] = [];
  private readonly waiters = new Map<string, Set<() => void>>();
  private started = false;
  private readonly unlisteners: (() => Promise<void>)[] = [];
  private unwatch: (() => void) | undefined;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    private readonly maxAgeMs: number,
  ) {}

  /** Whether cached values can be trusted now: notifications are being received. */
  get live(): boolean {
    return this.started && this.db.listening;
  }

  /** A cache of this instance, kept up to date by these invalidations; `maxSize` 0 turns it off. */
  cache<V>(maxSize: number, sizeOf: (value: V) => number): TaggedCache<V> {
    const cache = new TaggedCache<V>(maxSize, this.maxAgeMs, sizeOf, () => this.live);
    this.caches.push(cache);
    return cache;
  }

  async start(): Promise<void> {
    this.unwatch = this.db.onListenerState((listening) => {
      for (const cache of this.caches) cache.clear();
      if (!listening) this.log.warn("database listener lost: caches bypassed until it is back");
      else if (this.started) this.log.info("database listener back: caches emptied and in use again");
      // A write waiting to hear its notification may never hear it now; with the caches emptied it need not.
      for (const waiters of [...this.waiters.values()]) for (const wake of [...waiters]) wake();
    });
    this.unlisteners.push(
      await this.db.listen(cacheChannel, (tag) => {
        this.changed(tag);
        const waiters = this.waiters.get(tag);
        if (waiters) for (const wake of [...waiters]) wake();
      }),
      // A chat turn's messages are announced there, after their commit, rather than by the triggers (migration 005).
      await this.db.listen(threadEventsChannel, (payload) => this.changed(changeTags.thread(payload.slice(0, payload.lastIndexOf(" "))))),
    );
    this.started = true;
  }

  async stop(): Promise<void> {
    this.started = false;
    this.unwatch?.();
    for (const unlisten of this.unlisteners.splice(0)) await unlisten();
    for (const cache of this.caches) cache.clear();
  }

  /** Drops what the caches hold under `tag` (and any read of it in progress), on this instance, now. */
  changed(tag: string): void {
    for (const cache of this.caches) cache.invalidate(tag);
  }

  /** Runs a write, then drops the caches' entries under `tag` whether it succeeded or not (a failed turn keeps the user's message). */
  async changing<T>(tag: string, write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } finally {
      this.changed(tag);
    }
  }

  /**
   * Call before a write whose notification this instance must hear before answering: `heard` resolves once the
   * listener has delivered `tag` (other instances' listeners are told by PostgreSQL at the same moment), or when there
   * is nothing to wait for (no listener, or it dropped and the caches were emptied). `cancel` if the write fails.
   */
  expect(tag: string): { heard: Promise<void>; cancel(): void } {
    if (!this.live) return { heard: Promise.resolve(), cancel: () => undefined };
    let set = this.waiters.get(tag);
    if (!set) {
      set = new Set();
      this.waiters.set(tag, set);
    }
    const waiters = set;
    let wake!: () => void;
    const heard = new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.log.warn({ tag }, "did not hear the notification of a change in time");
        wake();
      }, hearTimeoutMs);
      wake = () => {
        clearTimeout(timer);
        waiters.delete(wake);
        if (waiters.size === 0 && this.waiters.get(tag) === waiters) this.waiters.delete(tag);
        resolve();
      };
    });
    waiters.add(wake);
    return { heard, cancel: wake };
  }
}
