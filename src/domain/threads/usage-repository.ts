import type { Queryable } from "../shared/database.js";

export interface UsageRepository {
  /** Voice cost is computed in SQL from exact decimals: seconds / 60 × price per minute. */
  addVoice(threadId: string, seconds: number, pricePerMinuteUsd: number, tx?: Queryable): Promise<void>;
}
