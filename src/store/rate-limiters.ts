import type { Redis } from "ioredis";
import pg from "pg";
import { RateLimiterMemory, RateLimiterPostgres, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from "rate-limiter-flexible";
import type { RateDecision, RateLimiter } from "../domain/access/rate-limits.js";

/** Where the counters live: this process, a PostgreSQL shared by instances, or Redis. */
export type RateLimitBackend = { kind: "memory" } | { kind: "postgres"; connectionString: string } | { kind: "redis"; url: string };

/** The table of migration 007_rate_limits, in rate-limiter-flexible's own layout. */
const postgresTable = "rate_limits";

/**
 * Counters by rate-limiter-flexible, on the backend the deployment has. One limiter per distinct (limit, window),
 * made on first use: a limit is part of the limiter, not of a hit.
 */
export class FlexibleRateLimiter implements RateLimiter {
  private readonly limiters = new Map<string, RateLimiterAbstract>();
  /** Loaded only with REDIS_URL: ioredis is a few megabytes of memory that other deployments never use. */
  private readonly redis: Promise<Redis> | undefined;
  private readonly pool: pg.Pool | undefined;

  constructor(backend: RateLimitBackend) {
    if (backend.kind === "redis") {
      this.redis = import("ioredis").then(({ Redis }) => {
        const client = new Redis(backend.url, { maxRetriesPerRequest: 2, enableOfflineQueue: true });
        client.on("error", () => undefined);
        return client;
      });
    }
    if (backend.kind === "postgres") {
      this.pool = new pg.Pool({ connectionString: backend.connectionString, max: 2 });
      this.pool.on("error", () => undefined);
    }
  }

  async hit(key: string, limit: number, windowMs: number): Promise<RateDecision> {
    try {
      await (await this.limiterFor(limit, windowMs)).consume(key);
      return { allowed: true, retryAfterSeconds: 0 };
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)) };
    }
  }

  private async limiterFor(points: number, windowMs: number): Promise<RateLimiterAbstract> {
    const name = `${points}:${windowMs}`;
    // Awaited before the lookup, so that the check and the insertion below run in one go.
    const redis = this.redis ? await this.redis : undefined;
    let limiter = this.limiters.get(name);
    if (!limiter) {
      const options = { points, duration: Math.ceil(windowMs / 1000), keyPrefix: `parley:rl:${name}` };
      if (redis) limiter = new RateLimiterRedis({ ...options, storeClient: redis });
      else if (this.pool) limiter = new RateLimiterPostgres({ ...options, storeClient: this.pool, storeType: "pool", tableName: postgresTable, tableCreated: true });
      else limiter = new RateLimiterMemory(options);
      this.limiters.set(name, limiter);
    }
    return limiter;
  }

  async close(): Promise<void> {
    await this.redis?.then((client) => client.quit()).catch(() => undefined);
    await this.pool?.end().catch(() => undefined);
  }
}
