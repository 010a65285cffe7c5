import type { Logger } from "pino";
import type { CallEventSink, CallMedia, CapabilitiesOf, TranscriptItem } from "./ports.js";
import type { CallRecord, CallsRepository, VendorTimes } from "./calls-repository.js";
import type { Db, Queryable } from "../shared/database.js";
import type { ConversationsRepository } from "../chat/conversations-repository.js";
import type { UsageRepository } from "../threads/usage-repository.js";
import type { ThreadLocks } from "../threads/thread-locks.js";
import { endableStatusesFor, finalStatusOf, type DisconnectionReason } from "./call-states.js";
import { callSummary } from "./call-views.js";
import type { EventsService } from "../events/events-service.js";
import { uuidv7 } from "../shared/ids.js";
import { changeTags, type Invalidations } from "../cache/invalidation.js";
import type { ProjectService } from "../projects/project-service.js";
import type { CallJobs } from "./scheduling.js";
import { hashCredential } from "../access/secrets.js";
import { roleOfSpeaker, speakerOfRole } from "./speakers.js";

export interface CallLifecycleStores {
  db: Db;
  calls: CallsRepository;
  conversations: ConversationsRepository;
  usage: UsageRepository;
}

/** What a vendor reports with a call's end: its own end time. */
export interface VendorEnd {
  endedAt?: Date;
}

export type FinishedListener = (callId: string, reason: DisconnectionReason) => void;

export type ConnectedListener = (callId: string) => void;

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
  private readonly connectedListeners: ConnectedListener[] = [];
  /** The end in progress of each call on this instance: signals of one call's end are handled one after the other. */
  private readonly endings = new Map<string, Promise<CallRecord | undefined>>();

  constructor(
    private readonly stores: CallLifecycleStores,
    private readonly projects: ProjectService,
    private readonly events: EventsService,
    private readonly locks: ThreadLocks,
    private readonly jobs: CallJobs,
    private readonly options: { owner: string; webCallJoinTimeoutMs: number; log: Logger; invalidations: Invalidations; capabilities: CapabilitiesOf },
  ) {}

  private finalizer: MediaFinalizer | undefined;

  onFinished(listener: FinishedListener): void {
    this.listeners.push(listener);
  }

  /**
   * Told of each call that goes live on this instance, whichever its carrier: it connected here, its media reached
   * this instance (an inbound call answered before it, see `answered`), once the call is ongoing, or its live leg came
   * back to this instance (`rejoined`).
   */
  onConnected(listener: ConnectedListener): void {
    this.connectedListeners.push(listener);
  }

  /**
   * The provider's way to put the recording and the timed transcript into the transition that ends a call, so that
   * the read that shows `ended` shows them too.
   */
  setMediaFinalizer(finalizer: MediaFinalizer): void {
    this.finalizer = finalizer;
  }

  /**
   * The call connected. A call already connected (its first turn came through the vendor's socket before the vendor's
   * own report) takes the vendor's start time all the same.
   */
  async connected(callId: string, startedAt?: Date): Promise<boolean> {
    const call = await this.stores.calls.findById(callId);
    if (call && call.status !== "queued" && startedAt) await this.applyVendorTimes(callId, { startedAt });
    if (!call || call.status !== "queued") return false;
    const owner = this.options.capabilities(call.provider).carries === "vendor" ? null : this.options.owner;
    return this.live(callId, await this.open(call, (tx) => this.stores.calls.connect(callId, owner, tx, startedAt)));
  }

  /**
   * An inbound call that a vendor brought, answered before its media reaches Parley (a Twilio stream): `ongoing` at
   * once, in a new conversation, and carried by whichever instance its media reaches (see CallsRepository.carry).
   */
  async answered(callId: string): Promise<boolean> {
    const call = await this.stores.calls.findById(callId);
    if (call?.status !== "queued") return false;
    return this.open(call, (tx) => this.stores.calls.answer(callId, tx));
  }

  /** The call's media reached this instance, which carries the call from now on; false when it is over or carried already. */
  async carry(callId: string): Promise<boolean> {
    return this.live(callId, (await this.stores.calls.carry(callId, this.options.owner)) !== undefined);
  }

  /**
   * The live leg of an ongoing call reached this instance again: a vendor reconnected its socket here, after a restart
   * or the loss of the instance that held it. The call goes live here as it did there (its length limit is this
   * instance's to hold from now, for the time left); false when the call is not ongoing.
   */
  async rejoined(callId: string): Promise<boolean> {
    return this.live(callId, (await this.stores.calls.findById(callId))?.status === "ongoing");
  }

  /** A call went live on this instance (`went`): it connected here, its media reached it, or it came back to it; listeners are told. */
  private live(callId: string, went: boolean): boolean {
    if (went) for (const listener of this.connectedListeners) listener(callId);
    return went;
  }

  /** queued → ongoing by `start`, with the call's new conversation, under the thread's lock. */
  private open(call: CallRecord, start: (tx: Queryable) => Promise<CallRecord | undefined>): Promise<boolean> {
    return this.track(
      this.locks.withLock(call.thread_id, () =>
        this.stores.db.transaction(async (tx) => {
          const started = await start(tx);
          if (!started) return false;
          const { conversationId } = await this.stores.conversations.current(started.thread_id, started.project_id, true, tx);
          await this.stores.calls.setConversation(call.id, conversationId, tx);
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

  /** The call's utterances so far, from the thread's history, in order. */
  async history(threadId: string, callId: string): Promise<TranscriptItem[]> {
    return (await this.stores.calls.utterances(threadId, callId)).map((utterance) => ({ role: speakerOfRole(utterance.role), content: utterance.content }));
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
   *
   * A call becomes `ended` once, with its record complete (decisions.md, Calls), whatever order the signals of its end
   * come in. When this instance carries the call's audio, the record is taken first (the speech pipeline stops, the
   * recording is stored) and written in the transition; signals that arrive meanwhile wait for it here, and then
   * find the call over. When another instance carries it, the end is noted in the database for that instance to
   * complete (see completeEnding); the call is returned as it waits.
   */
  async finish(callId: string, reason: DisconnectionReason, staleSeconds?: number, vendor?: VendorEnd): Promise<CallRecord | undefined> {
    const previous = this.endings.get(callId) ?? Promise.resolve(undefined);
    const ending = previous.catch(() => undefined).then(() => this.end(callId, reason, staleSeconds, vendor));
    this.endings.set(callId, ending);
    void ending
      .finally(() => {
        if (this.endings.get(callId) === ending) this.endings.delete(callId);
      })
      .catch(() => undefined);
    return ending;
  }

  /** An end noted by another instance, for a call whose audio this instance carries: it ends the call with its record. */
  async completeEnding(callId: string): Promise<void> {
    const call = await this.stores.calls.findById(callId);
    if (call?.status !== "ongoing" || call.ending_reason === null || call.owner !== this.options.owner) return;
    await this.finish(callId, call.ending_reason);
  }

  /** An end whose record the carrying instance did not deliver in time (it is wedged, or lost): the call ends without it. */
  async finishOverdue(callId: string): Promise<void> {
    const call = await this.stores.calls.findById(callId);
    if (call?.status !== "ongoing" || call.ending_reason === null) return;
    this.options.log.warn({ callId, owner: call.owner }, "a call's record did not arrive in time; the call ends without it");
    await this.transition(call, call.ending_reason, undefined, undefined, undefined);
  }

  private async end(callId: string, signalled: DisconnectionReason, staleSeconds?: number, vendor?: VendorEnd): Promise<CallRecord | undefined> {
    const call = await this.stores.calls.findById(callId);
    if (!call) return undefined;
    // The first reason given for an end that waited for its record is the call's.
    const reason = call.status === "ongoing" && call.ending_reason !== null ? call.ending_reason : signalled;
    if (!endableStatusesFor(reason).includes(call.status)) return undefined;
    const carried = call.status === "ongoing" && call.owner !== null && staleSeconds === undefined;
    if (carried && call.owner !== this.options.owner) {
      return this.track(this.stores.db.transaction((tx) => this.stores.calls.requestEnd(callId, reason, tx)));
    }
    const media = carried ? await this.takeMedia(callId) : undefined;
    return this.transition(call, reason, staleSeconds, media, vendor);
  }

  private async transition(call: CallRecord, reason: DisconnectionReason, staleSeconds: number | undefined, media: CallMedia | undefined, vendor: VendorEnd | undefined): Promise<CallRecord | undefined> {
    const callId = call.id;
    const pricePerMinute = await this.voicePrice(call);
    const finished = await this.track(
      this.locks.withLock(call.thread_id, () =>
        this.stores.db.transaction(async (tx) => {
          const ended = await this.stores.calls.finish(callId, endableStatusesFor(reason), finalStatusOf(reason), reason, tx, staleSeconds, media ?? (vendor ? { endedAt: vendor.endedAt } : undefined));
          if (!ended) return undefined;
          if (ended.started_at && ended.ended_at) {
            if (ended.conversation_id !== null) await this.stores.calls.endConversation(ended.thread_id, ended.conversation_id, tx);
            await this.charge(ended, pricePerMinute, tx);
            if (this.options.capabilities(ended.provider).records !== "vendor") await this.jobs.enqueueProcessing(callId, tx);
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
      if (finished.started_at && this.options.capabilities(finished.provider).records !== "vendor") this.jobs.wakeProcessing();
      for (const listener of this.listeners) listener(callId, reason);
    }
    return finished;
  }

  /**
   * A vendor's own times replace what Parley observed, whenever they arrive (decisions.md, Calls): the call's start
   * and end, and its length for usage. A call already over is charged the difference.
   */
  async applyVendorTimes(callId: string, times: VendorTimes): Promise<void> {
    const call = await this.stores.calls.findById(callId);
    if (!call) return;
    const pricePerMinute = await this.voicePrice(call);
    await this.track(
      this.stores.db.transaction(async (tx) => {
        const updated = await this.stores.calls.applyVendorTimes(callId, times, tx);
        if (!updated) return;
        if (updated.ended_at && updated.billed_seconds !== null) await this.charge(updated, pricePerMinute, tx);
        await this.publishUpdate(updated, tx);
      }),
    );
  }

  /** The call's voice usage: its vendor's length when it gave one, else from its start to its end. */
  private async charge(call: CallRecord, pricePerMinute: number, tx: Queryable): Promise<void> {
    if (!call.started_at || !call.ended_at) return;
    const seconds = call.vendor_duration_seconds ?? Math.max(0, call.ended_at.getTime() - call.started_at.getTime()) / 1000;
    const difference = await this.stores.calls.bill(call.id, seconds, tx);
    if (difference !== 0) await this.stores.usage.addVoice(call.thread_id, difference, pricePerMinute, tx);
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
