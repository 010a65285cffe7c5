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

/**
 * Channel on which every instance acknowledges a tag it heard and acted on, for the tags a write may wait on
 * (`expect`): `<listener session> <tag>`.
 */
export const cacheHeardChannel = "parley_cache_heard";

/** The tags of writes that answer only once every instance has dropped them: key revocations and rotations. */
const acknowledgedTag = /^api_key:/;

/** How long a write that waits for every instance to hear its notification (a key revocation) waits at most. */
const hearTimeoutMs = 5_000;

/** A write waiting for the sessions that have not yet acknowledged its tag. */
interface Waiter {
  pending: Set<number>;
  wake(): void;
}

/**
 * Keeps this instance's caches true to the database. Every write that changes what a cache shows makes PostgreSQL
 * NOTIFY its tag on commit (triggers, so that no write path can forget), which every instance's listener hears;
 * writes served here also invalidate at once (`changed`), before their response, so that a client reads its own
 * writes on this instance without waiting for the notification. While the listener is down notifications are
 * lost, so the caches are bypassed, and they are emptied when it drops and again when it is back.
 */
export class Invalidations {
  private readonly caches: Pick<TaggedCache<unknown>, "invalidate" | "clear">[] = [];
  private readonly waiters = new Map<string, Set<Waiter>>();
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
      for (const waiters of [...this.waiters.values()]) for (const waiter of [...waiters]) waiter.wake();
    });
    this.unlisteners.push(
      await this.db.listen(cacheChannel, (tag) => {
        this.changed(tag);
        if (acknowledgedTag.test(tag)) this.acknowledge(tag);
      }),
      await this.db.listen(cacheHeardChannel, (payload) => {
        const separator = payload.indexOf(" ");
        const session = Number(payload.slice(0, separator));
        for (const waiter of [...(this.waiters.get(payload.slice(separator + 1)) ?? [])]) {
          waiter.pending.delete(session);
          if (waiter.pending.size === 0) waiter.wake();
        }
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
   * Call before a write that must have reached every instance's caches before it is answered: `heard` resolves once
   * every instance listening when it was called has acknowledged `tag` (each does after dropping it), or when there is
   * nothing to wait for (no listener, or it dropped and the caches were emptied). An instance that starts listening
   * later starts with empty caches. `cancel` if the write fails.
   */
  async expect(tag: string): Promise<{ heard: Promise<void>; cancel(): void }> {
    if (!this.live) return { heard: Promise.resolve(), cancel: () => undefined };
    const pending = new Set(await this.db.listenerSessions());
    let set = this.waiters.get(tag);
    if (!set) {
      set = new Set();
      this.waiters.set(tag, set);
    }
    const waiters = set;
    let wake!: () => void;
    const heard = new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        this.log.warn({ tag, sessions: [...pending] }, "not every instance acknowledged a change in time");
        wake();
      }, hearTimeoutMs);
      wake = () => {
        clearTimeout(timer);
        waiters.delete(waiter);
        if (waiters.size === 0 && this.waiters.get(tag) === waiters) this.waiters.delete(tag);
        resolve();
      };
    });
    const waiter: Waiter = { pending, wake };
    waiters.add(waiter);
    return { heard, cancel: wake };
  }

  private acknowledge(tag: string): void {
    const session = this.db.listenerSession;
    if (session === undefined) return;
    this.db.query("SELECT pg_notify($1, $2)", [cacheHeardChannel, `${session} ${tag}`]).catch((error: unknown) => {
      this.log.warn({ err: error, tag }, "could not acknowledge a change");
    });
  }
}
