import type { Logger } from "pino";
import type { VoiceProvider } from "./ports.js";
import { callEndedChannel, callEndingChannel, type CallsRepository } from "./calls-repository.js";
import type { Db } from "../shared/database.js";
import type { CallLifecycle } from "./call-lifecycle.js";
import { disconnectionReasons, type DisconnectionReason } from "./call-states.js";

export interface CallSupervisorOptions {
  owner: string;
  heartbeatMs: number;
  staleAfterMs: number;
  recordWaitMs: number;
  /** How long past its maximum length an ongoing call may run before the sweep ends it (its carrier's timer ends it on time). */
  lengthGraceMs: number;
  log: Logger;
}

function isReason(value: string): value is DisconnectionReason {
  return Object.hasOwn(disconnectionReasons, value);
}

/**
 * Keeps live calls honest across instances. A call's live part (the simulated loop, a web client's socket) runs in
 * the process of the instance that carries it, recorded as the call's `owner`. Every instance vouches for its own
 * calls each beat, and sweeps: a live call whose owner has not vouched for `staleAfterMs` (a crashed or killed
 * instance, also one that ran on PGlite before a restart) ends as `error_instance_lost`, and a web call whose client
 * missed its join deadline as `error_user_not_joined`. The sweep's transitions are conditional like all others, so
 * several instances sweeping at once end each call once. It also hangs up, on this instance, the calls that other
 * instances ended (a DELETE served elsewhere), and it holds the one timer of a call's maximum length. It ends with
 * their record the calls it carries whose end another instance was told of (a vendor's callback served elsewhere), or
 * without it those whose carrier did not deliver it in time.
 *
 * A call's maximum length holds whatever happens to the instance that armed its timer: the instance its live leg
 * comes back to (Retell reconnecting its socket after a restart or the loss of another instance) arms it again from
 * the call's recorded start, and the sweep ends as `max_duration_reached` any ongoing call past its
 * `max_call_seconds` by more than `lengthGraceMs` (a vendor-carried call whose timer went with its instance, a call
 * whose carrier stopped beating), before the stale calls, so that such a call ends for its length rather than as lost.
 */
export class CallSupervisor {
  private timer: NodeJS.Timeout | undefined;
  private beat: Promise<void> | undefined;
  private unlisten: (() => Promise<void>) | undefined;
  private readonly lengthLimits = new Map<string, NodeJS.Timeout>();
  private unlistenEnding: (() => Promise<void>) | undefined;

  constructor(
    private readonly db: Db,
    private readonly calls: CallsRepository,
    private readonly lifecycle: CallLifecycle,
    private readonly provider: VoiceProvider,
    private readonly options: CallSupervisorOptions,
  ) {
    lifecycle.onConnected((callId) => {
      this.limitLength(callId).catch((error: unknown) => options.log.warn({ err: error, callId }, "arming a call's length limit failed"));
    });
    lifecycle.onFinished((callId) => this.unlimit(callId));
  }

  /**
   * Ends the live call as `max_duration_reached` once its maximum length (`voice.max_call_seconds`, or the inbound
   * one, as the call recorded it) has passed since it started; armed on the instance where it went live, whichever its
   * carrier (the simulated callee, a web client's socket, Twilio's media stream, Retell's socket or webhook), and again
   * on one its live leg came back to, for the time that is left.
   */
  private async limitLength(callId: string): Promise<void> {
    const call = await this.calls.findById(callId);
    if (!call?.started_at || call.status !== "ongoing" || this.lengthLimits.has(callId)) return;
    const remainingMs = call.started_at.getTime() + call.max_call_seconds * 1000 - Date.now();
    const timer = setTimeout(() => {
      this.lengthLimits.delete(callId);
      this.lifecycle.finish(callId, "max_duration_reached").catch((error: unknown) => this.options.log.warn({ err: error, callId }, "ending a call at its maximum length failed"));
    }, Math.max(0, remainingMs));
    timer.unref();
    this.lengthLimits.set(callId, timer);
  }

  private unlimit(callId: string): void {
    clearTimeout(this.lengthLimits.get(callId));
    this.lengthLimits.delete(callId);
  }

  async start(): Promise<void> {
    this.unlisten = await this.db.listen(callEndedChannel, (payload) => {
      const [callId = "", reason = ""] = payload.split(" ");
      // Ended on whichever instance: its length limit here is moot.
      this.unlimit(callId);
      if (isReason(reason)) void this.provider.endCall(callId, reason).catch(() => undefined);
    });
    this.unlistenEnding = await this.db.listen(callEndingChannel, (callId) => {
      this.lifecycle.completeEnding(callId).catch((error: unknown) => this.options.log.warn({ err: error, callId }, "ending a call with its record failed"));
    });
    await this.tick();
    this.timer = setInterval(() => {
      this.beat ??= this.tick().finally(() => {
        this.beat = undefined;
      });
    }, this.options.heartbeatMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    for (const timer of this.lengthLimits.values()) clearTimeout(timer);
    this.lengthLimits.clear();
    await this.beat;
    await this.unlisten?.();
    await this.unlistenEnding?.();
  }

  private async tick(): Promise<void> {
    try {
      await this.calls.heartbeat(this.options.owner);
      for (const callId of await this.calls.overLength(this.options.lengthGraceMs / 1000)) await this.lifecycle.finish(callId, "max_duration_reached");
      const staleSeconds = this.options.staleAfterMs / 1000;
      const { stale, notJoined } = await this.calls.abandoned(staleSeconds);
      for (const callId of notJoined) await this.lifecycle.finish(callId, "error_user_not_joined");
      for (const callId of stale) await this.lifecycle.finish(callId, "error_instance_lost", staleSeconds);
      for (const callId of await this.calls.overdueEnds(this.options.recordWaitMs / 1000)) await this.lifecycle.finishOverdue(callId);
    } catch (error) {
      this.options.log.warn({ err: error }, "the call supervisor's beat failed");
    }
  }
}
