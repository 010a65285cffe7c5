import { createHash } from "node:crypto";
import type { Logger } from "pino";
import type { RetellLlmCall } from "../../providers/voice/retell/retell-llm-session.js";
import { disconnectionReasonOf, parseWebhook, type RetellCallObject } from "../../providers/voice/retell/retell-payloads.js";
import { verifyRetellSignature } from "../../providers/voice/retell/retell-signature.js";
import { speakerOfRole } from "../../providers/voice/speakers.js";
import type { Db } from "../shared/database.js";
import { UnauthenticatedError } from "../shared/errors.js";
import type { ThreadLocks } from "../threads/thread-locks.js";
import type { CallLifecycle } from "./call-lifecycle.js";
import type { CallService } from "./call-service.js";
import { endableStatusesFor } from "./call-states.js";
import type { CallRecord, CallsRepository } from "./calls-repository.js";
import type { VendorCallsRepository } from "./vendor-calls-repository.js";
import { replyClosesConversation } from "./closing.js";

export interface RetellCallsDeps {
  db: Db;
  calls: CallsRepository;
  vendor: VendorCallsRepository;
  lifecycle: CallLifecycle;
  service: CallService;
  locks: ThreadLocks;
  log: Logger;
  /**
   * How long a Custom LLM socket for a call id not yet known waits for it: Retell may open the socket as soon as it
   * has created the call, a moment before its answer to create-phone-call has been recorded here.
   */
  socketGraceMs: number;
}

const live = (call: CallRecord) => call.status === "queued" || call.status === "ongoing";

/**
 * What Retell sends Parley, checked and applied: its Custom LLM socket (for calls Parley created, by Retell's call
 * id) and its signed webhooks (`call_started`, `call_ended`, `call_analyzed`). A webhook is verified with the API key
 * of the project version its call was created with, on the raw body, before anything in it is used; one delivered
 * again (a retry, a replay within the signature's window) is recognised by its digest and changes nothing.
 */
export class RetellCalls {
  constructor(private readonly deps: RetellCallsDeps) {}

  /** The call behind a Custom LLM socket, or undefined for a call id Parley did not create or that is over. */
  async llmCall(retellCallId: string): Promise<RetellLlmCall | undefined> {
    const deadline = Date.now() + this.deps.socketGraceMs;
    let call = await this.deps.vendor.findByProviderCallId("retell", retellCallId);
    while (!call && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      call = await this.deps.vendor.findByProviderCallId("retell", retellCallId);
    }
    if (!call || !live(call)) return undefined;
    const history = (await this.deps.calls.utterances(call.thread_id, call.id)).map((utterance) => ({
      role: speakerOfRole(utterance.role),
      content: utterance.content,
    }));
    const { agent, config } = await this.deps.service.agentFor(call, history.length);
    const callId = call.id;
    return {
      callId,
      agent,
      history,
      connect: async () => (await this.deps.lifecycle.connected(callId)) || (await this.deps.calls.findById(callId))?.status === "ongoing",
      closesConversation: replyClosesConversation,
      expire: async () => {
        await this.deps.lifecycle.finish(callId, "max_duration_reached");
      },
      maxCallSeconds: config.voice.max_call_seconds,
      log: this.deps.log,
    };
  }

  /** Applies a webhook; throws UnauthenticatedError for one that cannot be authenticated. */
  async webhook(rawBody: string, signature: string | undefined): Promise<void> {
    const hook = parseWebhook(rawBody);
    const call = hook ? await this.callOf(hook.call) : undefined;
    if (!hook || !call || !signature) throw new UnauthenticatedError("Invalid signature");
    const { secrets } = await this.deps.service.resolveVersion(call);
    if (!secrets.retellApiKey || !(await verifyRetellSignature(rawBody, secrets.retellApiKey, signature))) throw new UnauthenticatedError("Invalid signature");
    const digest = createHash("sha256").update(rawBody).digest("hex");
    if (!(await this.deps.vendor.claimDelivery("retell", digest, this.deps.db))) return;
    try {
      await this.deps.vendor.bind(call.id, "retell", hook.call.callId);
      await this.apply(hook.event, call, hook.call);
    } catch (error) {
      // Unclaimed, so that Retell's retry of this delivery is applied.
      await this.deps.vendor.releaseDelivery("retell", digest, this.deps.db);
      throw error;
    }
  }

  /** By Retell's call id; else by the Parley id placed in its metadata, for a webhook that outran create-phone-call's answer. */
  private async callOf(retell: RetellCallObject): Promise<CallRecord | undefined> {
    const bound = await this.deps.vendor.findByProviderCallId("retell", retell.callId);
    if (bound) return bound;
    if (!retell.parleyCallId) return undefined;
    const call = await this.deps.calls.findById(retell.parleyCallId);
    return call && call.provider === "retell" && call.provider_call_id === null ? call : undefined;
  }

  private async apply(event: string, call: CallRecord, retell: RetellCallObject): Promise<void> {
    if (event === "call_started") {
      await this.deps.lifecycle.connected(call.id, retell.startedAt);
    } else if (event === "call_ended") {
      await this.ended(call, retell);
    } else if (event === "call_analyzed") {
      await this.deps.db.transaction(async (tx) => {
        let updated: CallRecord | undefined = call;
        if (retell.transcriptObject && call.transcript_object === null) {
          updated = await this.deps.vendor.saveTranscript(call.id, { transcriptObject: retell.transcriptObject, recordingUrl: retell.recordingUrl ?? null }, tx);
        }
        if (retell.analysis) updated = await this.deps.vendor.saveAnalysis(call.id, retell.analysis, tx);
        if (updated) await this.deps.lifecycle.publishUpdate(updated, tx);
      });
    }
  }

  private async ended(call: CallRecord, retell: RetellCallObject): Promise<void> {
    const reason = disconnectionReasonOf(retell);
    // Retell's call_started may have been lost or may come later: a call that ended after talking was connected.
    if (call.status === "queued" && retell.startedAt && endableStatusesFor(reason).includes("ongoing")) {
      await this.deps.lifecycle.connected(call.id, retell.startedAt);
    }
    await this.recordRemainingUtterances(call, retell);
    const ending = { ...(retell.endedAt ? { endedAt: retell.endedAt } : {}), transcriptObject: retell.transcriptObject ?? [], recordingUrl: retell.recordingUrl ?? null };
    const ended = await this.deps.lifecycle.finish(call.id, reason, undefined, ending);
    if (ended) return;
    // Parley ended it first (DELETE, its maximum length): the transcript and recording are Retell's all the same.
    const current = await this.deps.calls.findById(call.id);
    if (!current || live(current) || current.started_at === null) return;
    await this.deps.db.transaction(async (tx) => {
      const saved = await this.deps.vendor.saveTranscript(call.id, { transcriptObject: ending.transcriptObject, recordingUrl: ending.recordingUrl }, tx);
      if (saved) await this.deps.lifecycle.publishUpdate(saved, tx);
    });
  }

  /**
   * The caller's last words, said after the agent's last reply (a goodbye before hanging up), were never answered and
   * so never reached the thread's history through the socket: they are taken from Retell's final transcript.
   */
  private async recordRemainingUtterances(call: CallRecord, retell: RetellCallObject): Promise<void> {
    const transcript = retell.transcriptObject;
    if (!transcript) return;
    await this.deps.locks.withLock(call.thread_id, async () => {
      const stored = await this.deps.calls.utterances(call.thread_id, call.id);
      const storedUsers = stored.filter((utterance) => utterance.role === "user").length;
      const users = transcript.filter((entry) => entry.role === "user" && entry.content.trim() !== "");
      const remaining = users.slice(storedUsers).map((entry) => ({ role: "user" as const, content: entry.content }));
      if (remaining.length > 0) await this.deps.lifecycle.record(call.id, remaining);
    });
  }
}
