import type { CallRecord } from "../domain/calls/calls-repository.js";
import type { VendorCallsRepository } from "../domain/calls/vendor-calls-repository.js";
import type { Queryable } from "../domain/shared/database.js";
import { jsonParam } from "./db.js";

const columns = `c.*, to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_key`;

/** How long a webhook delivery's digest is kept: far beyond any vendor's signature window or retry schedule. */
const deliveryRetentionHours = 48;

export class VendorCallsStore implements VendorCallsRepository {
  private deliveriesSincePurge = 0;

  constructor(private readonly db: Queryable) {}

  async findByProviderCallId(provider: string, providerCallId: string): Promise<CallRecord | undefined> {
    const [row] = await this.db.query<CallRecord>(`SELECT ${columns} FROM calls c WHERE c.provider = $1 AND c.provider_call_id = $2`, [provider, providerCallId]);
    return row;
  }

  async bind(id: string, provider: string, providerCallId: string): Promise<CallRecord | undefined> {
    const [row] = await this.db.query<CallRecord>(
      `UPDATE calls c SET provider_call_id = $3 WHERE c.id = $1 AND c.provider = $2 AND (c.provider_call_id IS NULL OR c.provider_call_id = $3)
        RETURNING ${columns}`,
      [id, provider, providerCallId],
    );
    return row;
  }

  async saveTranscript(id: string, results: { transcriptObject: unknown; recordingUrl: string | null }, tx: Queryable): Promise<CallRecord | undefined> {
    const [row] = await tx.query<CallRecord>(
      `UPDATE calls c SET transcript_object = $2, vendor_recording_url = coalesce($3, c.vendor_recording_url) WHERE c.id = $1 RETURNING ${columns}`,
      [id, jsonParam(results.transcriptObject), results.recordingUrl],
    );
    return row;
  }

  async saveAnalysis(id: string, analysis: unknown, tx: Queryable): Promise<CallRecord | undefined> {
    const [row] = await tx.query<CallRecord>(
      `UPDATE calls c SET call_analysis = $2, processed_at = coalesce(c.processed_at, clock_timestamp()) WHERE c.id = $1 RETURNING ${columns}`,
      [id, jsonParam(analysis)],
    );
    return row;
  }

  async claimDelivery(provider: string, digest: string, tx: Queryable): Promise<boolean> {
    const rows = await tx.query(`INSERT INTO voice_webhook_deliveries (provider, digest) VALUES ($1, $2) ON CONFLICT DO NOTHING RETURNING digest`, [
      provider,
      digest,
    ]);
    this.deliveriesSincePurge += 1;
    if (this.deliveriesSincePurge >= 100) {
      this.deliveriesSincePurge = 0;
      await tx.query(`DELETE FROM voice_webhook_deliveries WHERE received_at < now() - make_interval(hours => $1)`, [deliveryRetentionHours]);
    }
    return rows.length > 0;
  }

  async releaseDelivery(provider: string, digest: string, tx: Queryable): Promise<void> {
    await tx.query("DELETE FROM voice_webhook_deliveries WHERE provider = $1 AND digest = $2", [provider, digest]);
  }
}
