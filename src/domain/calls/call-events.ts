import type { Db } from "../shared/database.js";
import type { ThreadLocks } from "../threads/thread-locks.js";
import type { CallLifecycle } from "./call-lifecycle.js";
import { endableStatusesFor } from "./call-states.js";
import type { CallsRepository } from "./calls-repository.js";
import type { CallEvent, CarrierCall, TimedUtterance } from "./ports.js";
import type { VendorCallsRepository } from "./vendor-calls-repository.js";

export interface CallEventsDeps {
  db: Db;
  calls: CallsRepository;
  vendor: VendorCallsRepository;
  lifecycle: CallLifecycle;
  locks: ThreadLocks;
}

/**
 * The one place where what carriers report changes a call, whatever the vendor and whatever order its signals come
 * in. Each event is applied once, by its delivery id; ending goes through CallLifecycle.finish, which makes a call
 * `ended` only once its record is complete.
 */
export class CallEvents {
  constructor(private readonly deps: CallEventsDeps) {}

  /** Applies a report's events in order; a delivery whose effects fail is forgotten, so that the vendor's retry applies. */
  async apply(call: CarrierCall, events: readonly CallEvent[]): Promise<void> {
    for (const event of events) {
      if (!(await this.deps.vendor.claimDelivery(call.provider, event.deliveryId, this.deps.db))) continue;
      try {
        await this.applyOne(call.id, event);
      } catch (error) {
        await this.deps.vendor.releaseDelivery(call.provider, event.deliveryId, this.deps.db);
        throw error;
      }
    }
  }

  private async applyOne(callId: string, event: CallEvent): Promise<void> {
    const { lifecycle } = this.deps;
    switch (event.type) {
      case "connected":
        await lifecycle.connected(callId, event.startedAt);
        return;
      case "ended":
        await this.ended(callId, event);
        return;
      case "transcript":
        await this.transcript(callId, event.transcriptObject, event.recordingUrl);
        return;
      case "analysis":
        await this.deps.db.transaction(async (tx) => {
          const updated = await this.deps.vendor.saveAnalysis(callId, event.analysis, tx);
          if (updated) await lifecycle.publishUpdate(updated, tx);
        });
    }
  }

  private async ended(callId: string, event: Extract<CallEvent, { type: "ended" }>): Promise<void> {
    const { lifecycle } = this.deps;
    const call = await this.deps.calls.findById(callId);
    if (!call) return;
    const times = { ...(event.endedAt ? { endedAt: event.endedAt } : {}), ...(event.durationSeconds !== undefined ? { durationSeconds: event.durationSeconds } : {}) };
    // The vendor says a call ended normally that never connected here (its media stream never reached Parley, say).
    const reason = call.status === "queued" && !endableStatusesFor(event.reason).includes("queued") ? "error_provider" : event.reason;
    if (call.status === "queued" || call.status === "ongoing") {
      if (times.durationSeconds !== undefined) await lifecycle.applyVendorTimes(callId, { durationSeconds: times.durationSeconds });
      if (await lifecycle.finish(callId, reason, undefined, times.endedAt ? { endedAt: times.endedAt } : undefined)) return;
    }
    // Over already (Parley ended it first, or another signal did): the vendor's times still replace Parley's.
    await lifecycle.applyVendorTimes(callId, times);
  }

  /**
   * The vendor's transcript becomes the call's, once; the caller's last words, said after the agent's last reply (a goodbye
   * before hanging up), were never answered and so never reached the thread's history: they are taken from it.
   */
  private async transcript(callId: string, transcript: TimedUtterance[], recordingUrl: string | null): Promise<void> {
    const call = await this.deps.calls.findById(callId);
    // The first transcript given is the call's (Retell repeats it with its analysis).
    if (!call || call.transcript_object !== null) return;
    await this.deps.locks.withLock(call.thread_id, async () => {
      const stored = await this.deps.calls.utterances(call.thread_id, call.id);
      const storedUsers = stored.filter((utterance) => utterance.role === "user").length;
      const users = transcript.filter((entry) => entry.role === "user" && entry.content.trim() !== "");
      const remaining = users.slice(storedUsers).map((entry) => ({ role: "user" as const, content: entry.content }));
      if (remaining.length > 0) await this.deps.lifecycle.record(call.id, remaining);
    });
    await this.deps.db.transaction(async (tx) => {
      const saved = await this.deps.vendor.saveTranscript(callId, { transcriptObject: transcript, recordingUrl }, tx);
      if (saved) await this.deps.lifecycle.publishUpdate(saved, tx);
    });
  }
}
