import { randomUUID } from "node:crypto";
import pg from "pg";
import type { Db } from "../domain/shared/database.js";
import type { ThreadLease, ThreadLocks } from "../domain/threads/thread-locks.js";
import { LeaseBusyError } from "../domain/threads/thread-locks.js";

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
 * Across instances on one PostgreSQL, a lease on the thread row. It holds no pooled connection while a reply is
 * generated (a thousand concurrent streams need no thousand connections), and it does not outlive a killed
 * instance: the holder's liveness is vouched for by the backend pid of its instance's dedicated connection, and
 * a lease whose backend is gone (the instance died) may be taken at once; the expiry covers a hung holder.
 */
export class PostgresThreadLocks implements ThreadLocks {
  private readonly queue = new KeyedQueue();
  private readonly waiters = new Map<string, Set<() => void>>();
  private connection: Promise<{ client: pg.Client; pid: number }> | undefined;

  constructor(
    private readonly db: Db,
    private readonly connectionString: string,
  ) {}

  withLock<T>(threadId: string, work: () => Promise<T>): Promise<T> {
    return this.queue.run(threadId, async () => {
      const token = randomUUID();
      await this.acquire(threadId, token);
      return this.holding(threadId, token, work);
    });
  }

  withLeasedWork<T>(threadId: string, work: (lease: ThreadLease | null) => Promise<T>): Promise<T> {
    return this.queue.run(threadId, async () => {
      const { pid } = await this.liveness();
      const token = randomUUID();
      let released = false;
      const lease: ThreadLease = { token, pid, seconds: leaseSeconds, markReleased: () => (released = true) };
      return this.holding(
        threadId,
        token,
        async () => {
          for (let attempt = 0; ; attempt += 1) {
            const woken = this.nextWake(threadId, backoffMs(attempt));
            try {
              return await work(lease);
            } catch (error) {
              if (!(error instanceof LeaseBusyError)) throw error;
            }
            await woken;
          }
        },
        () => released,
      );
    });
  }

  /** Runs `work` under the lease `token`, keeping it alive, and releases it after (unless a statement of `work` did). */
  private async holding<T>(threadId: string, token: string, work: () => Promise<T>, releasedByWork: () => boolean = () => false): Promise<T> {
    const heartbeat = setInterval(() => {
      void this.db
        .query(`${asyncCommit} UPDATE threads SET lock_until = now() + make_interval(secs => $3) FROM no_flush WHERE id = $1 AND lock_token = $2`, [
          threadId,
          token,
          leaseSeconds,
        ])
        .catch(() => undefined);
    }, (leaseSeconds * 1000) / 3);
    try {
      return await work();
    } finally {
      clearInterval(heartbeat);
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

  private async acquire(threadId: string, token: string): Promise<void> {
    const { pid } = await this.liveness();
    for (let attempt = 0; ; attempt += 1) {
      const woken = this.nextWake(threadId, backoffMs(attempt));
      const rows = await this.db.query(
        `${asyncCommit} UPDATE threads SET lock_token = $2, lock_pid = $3, lock_until = now() + make_interval(secs => $4)
          FROM no_flush WHERE id = $1 AND (lock_token IS NULL OR lock_until < now()
                OR NOT EXISTS (SELECT 1 FROM pg_stat_get_activity(threads.lock_pid)))
          RETURNING id`,
        [threadId, token, pid, leaseSeconds],
      );
      if (rows.length > 0) return;
      await woken;
    }
  }

  private nextWake(threadId: string, timeoutMs: number): Promise<void> {
    return new Promise((resolve) => {
      let set = this.waiters.get(threadId);
      if (!set) {
        set = new Set();
        this.waiters.set(threadId, set);
      }
      const done = () => {
        clearTimeout(timer);
        set.delete(done);
        if (set.size === 0) this.waiters.delete(threadId);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      set.add(done);
    });
  }

  private liveness(): Promise<{ client: pg.Client; pid: number }> {
    this.connection ??= (async () => {
      const client = new pg.Client({ connectionString: this.connectionString, application_name: "parley-liveness" });
      client.on("error", () => {
        this.connection = undefined;
      });
      client.on("notification", (message) => {
        for (const wake of [...(this.waiters.get(message.payload ?? "") ?? [])]) wake();
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
    const connection = await this.connection?.catch(() => undefined);
    await connection?.client.end().catch(() => undefined);
  }
}
