import type { Logger } from "pino";
import type { CallEventSink, TranscriptItem } from "../../providers/voice/types.js";
import type { CallRecord, CallsRepository } from "./calls-repository.js";
import type { Db, Queryable } from "../shared/database.js";
import type { ConversationsRepository } from "../chat/conversations-repository.js";
import type { UsageRepository } from "../threads/usage-repository.js";
import type { ThreadLocks } from "../threads/thread-locks.js";
import type { VendorCallsRepository } from "./vendor-calls-repository.js";
import { carriedByVendor, resultsFromVendor } from "./vendors.js";
import { endableStatusesFor, finalStatusOf, type DisconnectionReason } from "./call-states.js";
import { callSummary } from "./call-views.js";
import type { EventsService } from "../events/events-service.js";
import { uuidv7 } from "../shared/ids.js";
import { changeTags, type Invalidations } from "../cache/invalidation.js";
import type { ProjectService } from "../projects/project-service.js";
import type { CallJobs } from "./scheduling.js";
import { hashCredential } from "../access/secrets.js";
import { roleOfSpeaker } from "../../providers/voice/speakers.js";

export interface CallLifecycleStores {
  db: Db;
  calls: CallsRepository;
  conversations: ConversationsRepository;
  usage: UsageRepository;
  vendor: VendorCallsRepository;
}

/** What a vendor reports with a call's end: its own end time, transcript and recording. */
export interface VendorEnd {
  endedAt?: Date;
  transcriptObject?: unknown;
  recordingUrl?: string | null;
}

export type FinishedListener = (callId: string, reason: DisconnectionReason) => void;

/** The recording and timed transcript of a call that this instance carried with real audio, taken as it ends. */
export interface CallMedia {
  transcriptObject: unknown;
  recordingKey: string;
  /** When the recording stops: the call's end, so that `duration_ms` is the recording's length. */
  endedAt: Date;
}

/** Stops a call's audio and stores its recording; undefined when this instance does not carry the call's audio. */
export type MediaFinalizer = (callId: string) => Promise<CallMedia | undefined>;

/**
 * The domain side of a call's life, as providers report it: connecting opens a new conversation of the thread,
 * utterances go to the thread's history in that conversation, and ending closes the conversation, bills the voice
 * minutes and queues the post-call job, all in the transaction of the status transition that allows it, so that
 * each happens once. Work that touches the conversation takes the thread lock, as chat turns do.
 */
export class CallLifecycle implements CallEventSink {
  private readonly pending = new Set<Promise<unknown>>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly listeners: FinishedListener[] = [];

  constructor(
    private readonly stores: CallLifecycleStores,
    private readonly projects: ProjectService,
    private readonly events: EventsService,
    private readonly locks: ThreadLocks,
    private readonly jobs: CallJobs,
    private readonly options: { owner: string; webCallJoinTimeoutMs: number; log: Logger; invalidations: Invalidations },
  ) {}

  private finalizer: MediaFinalizer | undefined;

  onFinished(listener: FinishedListener): void {
    this.listeners.push(listener);
  }

  /**
   * The provider's way to put the recording and the timed transcript into the transition that ends a call, so that
   * the read that shows `ended` shows them too.
   */
  setMediaFinalizer(finalizer: MediaFinalizer): void {
    this.finalizer = finalizer;
  }

  async connected(callId: string, startedAt?: Date): Promise<boolean> {
    const call = await this.stores.calls.findById(callId);
    if (!call || call.status !== "queued") return false;
    const owner = carriedByVendor(call.provider) ? null : this.options.owner;
    return this.track(
      this.locks.withLock(call.thread_id, () =>
        this.stores.db.transaction(async (tx) => {
          const started = await this.stores.calls.connect(callId, owner, tx, startedAt);
          if (!started) return false;
          const { conversationId } = await this.stores.conversations.current(started.thread_id, started.project_id, true, tx);
          await this.stores.calls.setConversation(callId, conversationId, tx);
          await this.publishUpdate({ ...started, conversation_id: conversationId }, tx);
          return true;
        }),
      ),
    );
  }

  async ended(callId: string, reason: DisconnectionReason): Promise<void> {
    await this.finish(callId, reason);
  }

  async webCallReady(callId: string, accessToken: string): Promise<void> {
    const deadline = new Date(Date.now() + this.options.webCallJoinTimeoutMs);
    const call = await this.stores.calls.setJoinToken(callId, hashCredential(accessToken), deadline);
    if (!call) return;
    await this.events.publish(call.thread_id, "web_call.ready", { call_id: callId, access_token: accessToken });
    // The supervisor's sweep would catch a missed deadline too; this timer makes it punctual.
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      this.finish(callId, "error_user_not_joined").catch((error: unknown) => this.options.log.warn({ err: error, callId }, "expiring a web call failed"));
    }, this.options.webCallJoinTimeoutMs);
    this.timers.add(timer);
  }

  /**
   * Stores utterances of an ongoing call in its conversation, with their message extras (an agent's tool calls):
   * their message ids, in order; undefined (nothing more stored) once the call is over.
   */
  async record(callId: string, utterances: (TranscriptItem & { extras?: Record<string, unknown> })[]): Promise<string[] | undefined> {
    const ids: string[] = [];
    for (const utterance of utterances) {
      const id = uuidv7();
      const role = roleOfSpeaker(utterance.role);
      if (!(await this.stores.calls.recordUtterance(callId, { id, role, content: utterance.content, extras: utterance.extras ?? {} }))) return undefined;
      ids.push(id);
    }
    return ids;
  }

  /**
   * Ends a call for `reason` if the state machine allows it from the call's current status; undefined when it does
   * not (already over, or another actor won). `staleSeconds` restricts it to a call whose carrier stopped beating.
   */
  async finish(callId: string, reason: DisconnectionReason, staleSeconds?: number, vendor?: VendorEnd): Promise<CallRecord | undefined> {
    const call = await this.stores.calls.findById(callId);
    if (!call || !endableStatusesFor(reason).includes(call.status)) return undefined;
    const pricePerMinute = await this.voicePrice(call);
    const media = call.status === "ongoing" && staleSeconds === undefined ? await this.takeMedia(callId) : undefined;
    const finished = await this.track(
      this.locks.withLock(call.thread_id, () =>
        this.stores.db.transaction(async (tx) => {
          let ended = await this.stores.calls.finish(callId, endableStatusesFor(reason), finalStatusOf(reason), reason, tx, staleSeconds, media ?? (vendor ? { endedAt: vendor.endedAt } : undefined));
          if (!ended) return undefined;
          if (vendor?.transcriptObject !== undefined) {
            ended = (await this.stores.vendor.saveTranscript(callId, { transcriptObject: vendor.transcriptObject, recordingUrl: vendor.recordingUrl ?? null }, tx)) ?? ended;
          }
          if (ended.started_at && ended.ended_at) {
            if (ended.conversation_id !== null) await this.stores.calls.endConversation(ended.thread_id, ended.conversation_id, tx);
            const seconds = (ended.ended_at.getTime() - ended.started_at.getTime()) / 1000;
            await this.stores.usage.addVoice(ended.thread_id, seconds, pricePerMinute, tx);
            if (!resultsFromVendor(ended.provider)) await this.jobs.enqueueProcessing(callId, tx);
          }
          await this.publishUpdate(ended, tx);
          await this.stores.calls.announceEnded(callId, reason, tx);
          return ended;
        }),
      ),
    );
    if (finished) {
      // Before `DELETE /voice/{thread_id}/phone-call` answers: the thread's pages show the conversation's end.
      this.options.invalidations.changed(changeTags.thread(finished.thread_id));
      if (finished.started_at && !resultsFromVendor(finished.provider)) this.jobs.wakeProcessing();
      for (const listener of this.listeners) listener(callId, reason);
    }
    return finished;
  }

  /** Shutdown: the calls this instance carries cannot outlive it, so they end now rather than when found stale. */
  async abandonOwned(): Promise<void> {
    for (const callId of await this.stores.calls.carriedBy(this.options.owner)) await this.finish(callId, "error_instance_lost");
  }

  async publishUpdate(call: CallRecord, tx: Queryable): Promise<void> {
    await this.events.append(call.thread_id, "call.updated", { call: callSummary(call) }, tx);
  }

  /** The post-call job is done: `call.updated` as before, and `call.analyzed` with the analysis. */
  async publishAnalyzed(call: CallRecord, tx: Queryable): Promise<void> {
    await this.publishUpdate(call, tx);
    await this.events.append(call.thread_id, "call.analyzed", { call_id: call.id, call_analysis: call.call_analysis ?? null }, tx);
  }

  /** Waits for transitions in flight, so that the database is not closed under them. */
  async close(): Promise<void> {
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  private async takeMedia(callId: string): Promise<CallMedia | undefined> {
    try {
      return await this.finalizer?.(callId);
    } catch (error) {
      // The post-call job renders a recording from the stored utterances instead.
      this.options.log.error({ err: error, callId }, "storing a call's recording failed");
      return undefined;
    }
  }

  private async voicePrice(call: CallRecord): Promise<number> {
    return (await this.projects.resolveById(call.organization_id, call.project_id, call.config_version_id)).config.pricing.voice_minute_usd;
  }

  private track<T>(work: Promise<T>): Promise<T> {
    this.pending.add(work);
    void work.finally(() => this.pending.delete(work)).catch(() => undefined);
    return work;
  }
}
