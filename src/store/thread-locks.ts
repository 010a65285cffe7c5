import pg from "pg";
import type { Db } from "../domain/shared/database.js";
import type { ThreadLease, ThreadLocks } from "../domain/threads/thread-locks.js";
import { LeaseBusyError } from "../domain/threads/thread-locks.js";
import { uuidv4 } from "../domain/shared/ids.js";

/** A FIFO per key inside this process, so that at most one waiter per thread asks the database. */
class KeyedQueue {
  private readonly tails = new Map<string, Promise<void>>();

  async run<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => mine);
    this.tails.set(key, tail);
    await previous;
    try {
      return await work();
    } finally {
      release();
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }

  get size(): number {
    return this.tails.size;
  }
}

/** PGlite is one process's database, so an in-process queue is the whole lock. */
export class InProcessThreadLocks implements ThreadLocks {
  private readonly queue = new KeyedQueue();

  withLock<T>(threadId: string, work: () => Promise<T>): Promise<T> {
    return this.queue.run(threadId, work);
  }

  withLeasedWork<T>(threadId: string, work: (lease: ThreadLease | null) => Promise<T>): Promise<T> {
    return this.queue.run(threadId, () => work(null));
  }

  async close(): Promise<void> {}
}

export const unlockChannel = "parley_thread_unlocked";
/**
 * Lease statements commit without waiting for a disk flush: a lease lost in a crash is void anyway (its holder's
 * backend is gone), so durability buys nothing here and would cost a flush per acquire and per release.
 */
const asyncCommit = "WITH no_flush AS (SELECT set_config('synchronous_commit', 'off', true))";
const leaseSeconds = 30;
/** How long a waiter sleeps when no unlock notification wakes it first (a holder that died releases nothing). */
const backoffMs = (attempt: number) => Math.min(25 * 2 ** attempt, 500);

/**
 * Listens for a thread's unlock notification from before an attempt to take its lease, so that one sent while the
 * attempt fails is not missed; a timer is set only once the attempt failed and there is something to wait for.
 */
class UnlockWatch {
  private heard = false;
  private wake: (() => void) | undefined;

  constructor(private readonly stopWatching: (watch: UnlockWatch) => void) {}

  unlocked(): void {
    this.heard = true;
    this.wake?.();
  }

  /** Resolves on the unlock notification (at once if it came already) or after `timeoutMs`, and stops watching. */
  wait(timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.wake?.(), timeoutMs);
      this.wake = () => {
        clearTimeout(timer);
        this.stop();
        resolve();
      };
      if (this.heard) this.wake();
    });
  }

  stop(): void {
    this.wake = undefined;
    this.stopWatching(this);
  }
}

/**
 * Across instances on one PostgreSQL, a lease on the thread row. It holds no pooled connection while a reply is
 * generated (a thousand concurrent streams need no thousand connections), and it does not outlive a killed
 * instance: the holder's liveness is vouched for by the backend pid of its instance's dedicated connection, and
 * a lease whose backend is gone (the instance died) may be taken at once; the expiry covers a hung holder.
 */
export class PostgresThreadLocks implements ThreadLocks {
  private readonly queue = new KeyedQueue();
  private readonly watches = new Map<string, Set<UnlockWatch>>();
  /** The leases this instance holds, by thread (one at most each, the queue sees to it): the heartbeat keeps them alive. */
  private readonly held = new Map<string, string>();
  private heartbeat: NodeJS.Timeout | undefined;
  private connection: Promise<{ client: pg.Client; pid: number }> | undefined;

  constructor(
    private readonly db: Db,
    private readonly connectionString: string,
  ) {}

  withLock<T>(threadId: string, work: () => Promise<T>): Promise<T> {
    return this.queue.run(threadId, async () => {
      const token = uuidv4();
      await this.acquire(threadId, token);
      return this.holding(threadId, token, work);
    });
  }

  withLeasedWork<T>(threadId: string, work: (lease: ThreadLease | null) => Promise<T>): Promise<T> {
    return this.queue.run(threadId, async () => {
      const { pid } = await this.liveness();
      const token = uuidv4();
      let released = false;
      const lease: ThreadLease = {
        token,
        pid,
        seconds: leaseSeconds,
        markReleased() {
          released = true;
        },
      };
      return this.holding(
        threadId,
        token,
        async () => {
          for (let attempt = 0; ; attempt += 1) {
            const watch = this.watchUnlock(threadId);
            try {
              const result = await work(lease);
              watch.stop();
              return result;
            } catch (error) {
              if (!(error instanceof LeaseBusyError)) {
                watch.stop();
                throw error;
              }
            }
            await watch.wait(backoffMs(attempt));
          }
        },
        () => released,
      );
    });
  }

  /** Runs `work` under the lease `token`, keeping it alive, and releases it after (unless a statement of `work` did). */
  private async holding<T>(threadId: string, token: string, work: () => Promise<T>, releasedByWork: () => boolean = () => false): Promise<T> {
    this.held.set(threadId, token);
    // One timer renews every lease held, and stops at a beat that finds none held: a turn shorter than its period
    // (most) costs no timer of its own, even when turns come one at a time.
    this.heartbeat ??= setInterval(() => this.renewLeases(), (leaseSeconds * 1000) / 3);
    try {
      return await work();
    } finally {
      this.held.delete(threadId);
      if (!releasedByWork()) {
        await this.db
          .query(
            `${asyncCommit}, released AS (UPDATE threads SET lock_token = NULL, lock_pid = NULL, lock_until = NULL FROM no_flush
                                            WHERE id = $1 AND lock_token = $2 RETURNING id)
             SELECT pg_notify('${unlockChannel}', id) FROM released`,
            [threadId, token],
          )
          .catch(() => undefined);
      }
    }
  }

  private renewLeases(): void {
    if (this.held.size === 0) {
      clearInterval(this.heartbeat);
      this.heartbeat = undefined;
      return;
    }
    for (const [threadId, token] of this.held) {
      void this.db
        .query(`${asyncCommit} UPDATE threads SET lock_until = now() + make_interval(secs => $3) FROM no_flush WHERE id = $1 AND lock_token = $2`, [
          threadId,
          token,
          leaseSeconds,
        ])
        .catch(() => undefined);
    }
  }

  private async acquire(threadId: string, token: string): Promise<void> {
    const { pid } = await this.liveness();
    for (let attempt = 0; ; attempt += 1) {
      const watch = this.watchUnlock(threadId);
      const rows = await this.db.query(
        `${asyncCommit} UPDATE threads SET lock_token = $2, lock_pid = $3, lock_until = now() + make_interval(secs => $4)
          FROM no_flush WHERE id = $1 AND (lock_token IS NULL OR lock_until < now()
                OR NOT EXISTS (SELECT 1 FROM pg_stat_get_activity(threads.lock_pid)))
          RETURNING id`,
        [threadId, token, pid, leaseSeconds],
      ).catch((error: unknown) => {
        watch.stop();
        throw error;
      });
      if (rows.length > 0) {
        watch.stop();
        return;
      }
      await watch.wait(backoffMs(attempt));
    }
  }

  private watchUnlock(threadId: string): UnlockWatch {
    let set = this.watches.get(threadId);
    if (!set) {
      set = new Set();
      this.watches.set(threadId, set);
    }
    const watching = set;
    const watch = new UnlockWatch((stopped) => {
      watching.delete(stopped);
      if (watching.size === 0 && this.watches.get(threadId) === watching) this.watches.delete(threadId);
    });
    watching.add(watch);
    return watch;
  }

  private liveness(): Promise<{ client: pg.Client; pid: number }> {
    this.connection ??= (async () => {
      const client = new pg.Client({ connectionString: this.connectionString, application_name: "parley-liveness" });
      client.on("error", () => {
        this.connection = undefined;
      });
      client.on("notification", (message) => {
        for (const watch of [...(this.watches.get(message.payload ?? "") ?? [])]) watch.unlocked();
      });
      await client.connect();
      await client.query(`LISTEN ${unlockChannel}`);
      const [row] = (await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows;
      return { client, pid: row!.pid };
    })().catch((error: unknown) => {
      this.connection = undefined;
      throw error;
    });
    return this.connection;
  }

  async close(): Promise<void> {
    clearInterval(this.heartbeat);
    this.heartbeat = undefined;
    const connection = await this.connection?.catch(() => undefined);
    await connection?.client.end().catch(() => undefined);
  }
}
