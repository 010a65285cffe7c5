import type { Queryable } from "../domain/shared/database.js";

export class UsageStore {
  constructor(private readonly db: Queryable) {}

  /** Voice cost is computed in SQL from exact decimals: seconds / 60 × price per minute. */
  async addVoice(threadId: string, seconds: number, pricePerMinuteUsd: number, tx: Queryable = this.db): Promise<void> {
    await tx.query(
      `UPDATE threads SET voice_seconds = voice_seconds + $2::numeric,
              voice_cost = voice_cost + round($2::numeric / 60 * $3::numeric, 8) WHERE id = $1`,
      [threadId, String(seconds), String(pricePerMinuteUsd)],
    );
  }
}
