import { Redis } from "ioredis";
import type { Queryable } from "./db.js";

export interface RateDecision {
  allowed: boolean;
  /** Seconds until the current window closes. */
  retryAfterSeconds: number;
}

/** Counts hits of a key in fixed windows; `limit` hits per window are allowed. */
export interface RateLimiter {
  hit(key: string, limit: number, windowMs: number): Promise<RateDecision>;
  close(): Promise<void>;
}

function decision(hits: number, limit: number, msLeft: number): RateDecision {
  return { allowed: hits <= limit, retryAfterSeconds: Math.max(1, Math.ceil(msLeft / 1000)) };
}

/** One instance: counters in memory, windows dropped as they end. */
export class InProcessRateLimiter implements RateLimiter {
  private readonly windows = new Map<string, { start: number; hits: number }>();

  async hit(key: string, limit: number, windowMs: number): Promise<RateDecision> {
    const now = Date.now();
    const start = now - (now % windowMs);
    let window = this.windows.get(key);
    if (!window || window.start !== start) {
      if (this.windows.size > 100_000) this.prune(start);
      window = { start, hits: 0 };
      this.windows.set(key, window);
    }
    window.hits += 1;
    return decision(window.hits, limit, start + windowMs - now);
  }

  private prune(currentStart: number): void {
    for (const [key, window] of this.windows) if (window.start < currentStart) this.windows.delete(key);
  }

  async close(): Promise<void> {}
}

const incrementScript = `
local hits = redis.call('INCR', KEYS[1])
if hits == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return {hits, redis.call('PTTL', KEYS[1])}`;

/** Several instances: one atomic INCR + expiry per hit in Redis. */
export class RedisRateLimiter implements RateLimiter {
  private readonly redis: Redis;

  constructor(url: string) {
    this.redis = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 2, enableOfflineQueue: true });
    this.redis.on("error", () => undefined);
  }

  async hit(key: string, limit: number, windowMs: number): Promise<RateDecision> {
    const now = Date.now();
    const start = now - (now % windowMs);
    const [hits, ttl] = (await this.redis.eval(incrementScript, 1, `parley:rl:${key}:${start}`, String(windowMs))) as [number, number];
    return decision(hits, limit, ttl > 0 ? ttl : start + windowMs - now);
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => undefined);
  }
}

/** Several instances without Redis: an upserted counter row per key and window. */
export class PostgresRateLimiter implements RateLimiter {
  private lastPrune = 0;

  constructor(private readonly db: Queryable) {}

  async hit(key: string, limit: number, windowMs: number): Promise<RateDecision> {
    const now = Date.now();
    const start = now - (now % windowMs);
    const [row] = await this.db.query<{ hits: number }>(
      `INSERT INTO rate_limit_windows (key, window_start, hits) VALUES ($1, to_timestamp($2 / 1000.0), 1)
       ON CONFLICT (key, window_start) DO UPDATE SET hits = rate_limit_windows.hits + 1 RETURNING hits`,
      [key, start],
    );
    if (now - this.lastPrune > 60_000) {
      this.lastPrune = now;
      void this.db.query("DELETE FROM rate_limit_windows WHERE window_start < now() - interval '1 hour'").catch(() => undefined);
    }
    return decision(row?.hits ?? 1, limit, start + windowMs - now);
  }

  async close(): Promise<void> {}
}
