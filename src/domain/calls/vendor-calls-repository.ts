import type { Queryable } from "../shared/database.js";
import type { CallRecord } from "./calls-repository.js";

/** What calls placed through a vendor add to a call: the vendor's id for it, its results, its webhook deliveries. */
export interface VendorCallsRepository {
  findByProviderCallId(provider: string, providerCallId: string): Promise<CallRecord | undefined>;
  /** Records the vendor's id for a call, once: a call already bound to another id is left alone (undefined). */
  bind(id: string, provider: string, providerCallId: string): Promise<CallRecord | undefined>;
  /** The vendor's transcript and recording, written in the transaction that ends the call. */
  saveTranscript(id: string, results: { transcriptObject: unknown; recordingUrl: string | null }, tx: Queryable): Promise<CallRecord | undefined>;
  /** The vendor's post-call analysis; the call counts as processed from then on. */
  saveAnalysis(id: string, analysis: unknown, tx: Queryable): Promise<CallRecord | undefined>;
  /**
   * Claims a webhook delivery by its digest: true the first time, false for a repeat. Called in the transaction
   * that applies the delivery, so that a delivery whose effects failed can be tried again.
   */
  claimDelivery(provider: string, digest: string, tx: Queryable): Promise<boolean>;
  /** Forgets a claimed delivery whose effects failed, so that the vendor's retry is applied. */
  releaseDelivery(provider: string, digest: string, tx: Queryable): Promise<void>;
}
