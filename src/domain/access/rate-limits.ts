import type { Caller } from "./credentials.js";
import { RateLimitedError } from "../shared/errors.js";

export interface RateDecision {
  allowed: boolean;
  /** Seconds until the caller may try again. */
  retryAfterSeconds: number;
}

/** Counts hits of a key; `limit` hits per window are allowed. */
export interface RateLimiter {
  hit(key: string, limit: number, windowMs: number): Promise<RateDecision>;
  close(): Promise<void>;
}

export interface RateLimitSettings {
  /** Requests per minute per API key (or per thread token); 0 = unlimited. */
  perKeyPerMinute: number;
  /** Requests per minute per organization, all its keys and tokens together; 0 = unlimited. */
  perOrganizationPerMinute: number;
}

const minute = 60_000;

/** Checks a caller against the per-key and per-organization limits; rate-limited, with the wait, when one is exceeded. */
export class RateLimits {
  constructor(
    private readonly limiter: RateLimiter,
    private readonly settings: RateLimitSettings,
  ) {}

  get enabled(): boolean {
    return this.settings.perKeyPerMinute > 0 || this.settings.perOrganizationPerMinute > 0;
  }

  async check(caller: Caller): Promise<void> {
    const credentialKey = caller.kind === "apiKey" ? `key:${caller.apiKeyId}` : `thread:${caller.threadId}`;
    const [perKey, perOrganization] = await Promise.all([
      this.settings.perKeyPerMinute > 0 ? this.limiter.hit(credentialKey, this.settings.perKeyPerMinute, minute) : undefined,
      this.settings.perOrganizationPerMinute > 0 ? this.limiter.hit(`org:${caller.organizationId}`, this.settings.perOrganizationPerMinute, minute) : undefined,
    ]);
    if (perKey && !perKey.allowed) throw new RateLimitedError("Rate limit exceeded for this credential", perKey.retryAfterSeconds);
    if (perOrganization && !perOrganization.allowed) {
      throw new RateLimitedError("Rate limit exceeded for this organization", perOrganization.retryAfterSeconds);
    }
  }
}
