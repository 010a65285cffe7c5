import type { Logger } from "pino";
import type { ValidationIssue } from "../shared/validation-issue.js";
import type {
  CapabilitiesOf,
  CarrierCall,
  InboundAnswer,
  InboundCaller,
  InboundLine,
  PlacedCall,
  ProviderCall,
  SimulatedCallerHost,
  VoiceProvider,
  WebCallClient,
  WebCallConnection,
  WebCallHost,
} from "./ports.js";
import type { CallFilters, CallRecord, CallsRepository } from "./calls-repository.js";
import type { CallDirection, DisconnectionReason } from "./call-states.js";
import type { VendorCallsRepository } from "./vendor-calls-repository.js";
import type { Db } from "../shared/database.js";
import type { ThreadLocks } from "../threads/thread-locks.js";
import type { CallLifecycle } from "./call-lifecycle.js";
import { callerLineFor, normalizeCallee } from "./call-numbers.js";
import type { CallResults } from "./call-results.js";
import {
  callDetail,
  callSummary,
  decodeListCursor,
  encodeListCursor,
  inboundCallView,
  phoneCallView,
  type CallDetailView,
  type CallSummaryView,
  type InboundCallView,
  type PhoneCallView,
} from "./call-views.js";
import { inboundSettingsOf } from "../projects/project-config.js";
import type { LlmFactory } from "../chat/chat-service.js";
import { ConflictError, ForbiddenError, NotFoundError, RequestValidationError, UpstreamError, valueError } from "../shared/errors.js";
import { uuidv7 } from "../shared/ids.js";
import type { ProjectService, ResolvedProject } from "../projects/project-service.js";
import type { CallJobs } from "./scheduling.js";
import { hashCredential, sameSecret, type SecretBox } from "../access/secrets.js";
import { callAgent, type CallToolSupport } from "./call-agent.js";
import type { ThreadService } from "../threads/thread-service.js";
import type { MessagesRepository } from "../history/messages-repository.js";

export interface PhoneCallInput {
  callee: string;
  projectId: string;
  /** The parsed time and the value as sent (for the 422's `input`). */
  scheduledFor?: { at: Date; input: unknown };
  voiceProviderAccountId?: string;
  /** A prompt variable of the call, and part of each tool request. */
  appointmentOpeningId?: string;
  /** A prompt variable of the call only; stored sealed, never returned. */
  verificationCode?: string;
}

export interface CallListQuery {
  statuses?: string[];
  callTypes?: string[];
  directions?: string[];
  from?: Date;
  /** A bare date includes its whole day; a datetime is an instant. */
  to?: { at: Date; wholeDay: boolean };
  threadId?: string;
  projectName?: string;
  cursor?: string;
  limit: number;
}

export interface CallServiceDeps {
  db: Db;
  calls: CallsRepository;
  threads: ThreadService;
  projects: ProjectService;
  lifecycle: CallLifecycle;
  results: CallResults;
  jobs: CallJobs;
  provider: VoiceProvider & WebCallHost & SimulatedCallerHost;
  locks: ThreadLocks;
  llm: LlmFactory;
  owner: string;
  vendor: VendorCallsRepository;
  messages: Pick<MessagesRepository, "olderThanOrAt">;
  /** `PUBLIC_BASE_URL`: where vendors reach this service; a vendor provider cannot work without it. */
  publicBaseUrl: string | undefined;
  log: Logger;
  capabilities: CapabilitiesOf;
  /** How the agent's tools reach their receivers and announce their calls. */
  tools: CallToolSupport;
  /** Seals a call's verification code (the server's encryption key). */
  secretBox: SecretBox;
}

/** Ends that Parley decides, which a vendor carrying the call must be told of; other ends come from the vendor. */
const endedByParley: ReadonlySet<DisconnectionReason> = new Set<DisconnectionReason>(["manual_stopped", "cancelled", "max_duration_reached", "error_user_not_joined"]);

const dayMs = 86_400_000;

/** Phone and web calls through the interface: creating, ending, joining, listing and reading them. */
export class CallService {
  constructor(private readonly deps: CallServiceDeps) {}

  async start(): Promise<void> {
    this.deps.lifecycle.onFinished((callId, reason) => {
      void this.deps.provider.endCall(callId, reason).catch(() => undefined);
      if (endedByParley.has(reason)) void this.hangUpAtVendor(callId);
    });
    await this.deps.jobs.start({
      startScheduledCall: (callId) => this.startScheduled(callId),
      processEndedCall: (callId) => this.processResults(callId),
    });
  }

  async createPhoneCall(organizationId: string, threadId: string, input: PhoneCallInput): Promise<PhoneCallView> {
    const issues: ValidationIssue[] = [];
    let toNumber = "";
    try {
      toNumber = normalizeCallee(input.callee);
    } catch (error) {
      if (!(error instanceof RequestValidationError)) throw error;
      issues.push(...error.issues);
    }
    if (input.scheduledFor && input.scheduledFor.at.getTime() <= Date.now()) {
      issues.push(...valueError(["body", "scheduled_for"], "scheduled_for must be in the future", input.scheduledFor.input).issues);
    }
    if (issues.length > 0) throw new RequestValidationError(issues);
    const thread = await this.deps.threads.get(organizationId, threadId);
    const resolved = await this.deps.projects.resolveById(organizationId, input.projectId);
    this.requirePublicAddress(resolved, input.projectId);
    const line = callerLineFor(resolved.config.voice, resolved.project.id, input.voiceProviderAccountId);
    const scheduledFor = input.scheduledFor?.at ?? null;
    const call = await this.deps.db.transaction(async (tx) => {
      const inserted = await this.deps.calls.insert(
        {
          ...newCallOf(organizationId, thread.id, resolved, "outbound"),
          callType: "phone_call",
          status: scheduledFor ? "scheduled" : "queued",
          fromNumber: line.fromNumber,
          toNumber,
          voiceProviderAccountId: line.accountId,
          scheduledFor,
          owner: scheduledFor || this.carriedByVendor(resolved.config.voice.provider) ? null : this.deps.owner,
          appointmentOpeningId: input.appointmentOpeningId ?? null,
          verificationCodeSealed: input.verificationCode !== undefined ? this.deps.secretBox.seal(input.verificationCode) : null,
        },
        tx,
      );
      if (!inserted) throw new ConflictError("The thread already has an active phone call");
      if (scheduledFor) await this.deps.jobs.scheduleStart(inserted.id, scheduledFor, tx);
      await this.deps.lifecycle.publishUpdate(inserted, tx);
      return inserted;
    });
    if (call.status === "queued") await this.dial(call);
    return phoneCallView(call);
  }

  /**
   * A simulated caller rings the project's first number (decisions.md, Inbound calls): the call is answered at once
   * (`ongoing`, never `queued`) on the caller's thread, found by its alias or created with it, and the agent greets.
   */
  async answerSimulatedCaller(organizationId: string, input: { projectId: string; from: string }): Promise<InboundCallView> {
    const fromNumber = normalizeCallee(input.from, ["body", "from"]);
    const resolved = await this.deps.projects.resolveById(organizationId, input.projectId);
    const inbound = inboundSettingsOf(resolved.config);
    if (!inbound.enabled) throw valueError(["body", "project_id"], "the project does not answer calls: set voice.inbound.enabled in its configuration", input.projectId);
    const account = resolved.config.voice.accounts.find((candidate) => candidate.phone_numbers.length > 0);
    if (!account) throw valueError(["body", "project_id"], "the project has no voice provider account with a phone number", input.projectId);
    const inserted = await this.insertInbound(resolved, { provider: "simulated", fromNumber, toNumber: account.phone_numbers[0]!, accountId: account.id, owner: this.deps.owner });
    if (!inserted) throw new ConflictError("The caller's thread already has an active phone call");
    if (!(await this.deps.lifecycle.connected(inserted.id))) throw new ConflictError("The call ended before it was answered");
    const call = (await this.deps.calls.findById(inserted.id)) ?? inserted;
    const request = await this.agentFor(call);
    await this.deps.provider.playSimulatedCaller({ ...request, fromNumber, toNumber: call.to_number ?? "", greeting: inbound.greeting });
    return inboundCallView(call);
  }

  /**
   * The projects that hold `number` on the vendor `provider`, across organizations: the dialed number says whose call
   * it is, and the vendor's carrier checks the request against each one's credentials before anything is made.
   */
  async linesFor(provider: string, number: string): Promise<InboundLine[]> {
    const lines: InboundLine[] = [];
    const digits = number.replace(/\D/g, "");
    for (const resolved of await this.deps.projects.findByPhoneNumber(provider, number)) {
      const account = resolved.config.voice.accounts.find((candidate) => candidate.phone_numbers.some((phone) => phone.replace(/\D/g, "") === digits));
      if (!account) continue;
      lines.push({
        organizationId: resolved.project.organization_id,
        projectId: resolved.project.id,
        accountId: account.id,
        config: resolved.config,
        secrets: resolved.secrets,
        answers: inboundSettingsOf(resolved.config).enabled,
      });
    }
    return lines;
  }

  /**
   * A vendor's caller, authenticated by its carrier against `line` (decisions.md, Inbound calls): answered as the
   * simulated caller is, on the thread whose alias is the caller's number, in the line's organization and project
   * only. A call the vendor carries connects at once; one whose media comes to Parley (Twilio's stream) is answered
   * and waits for it, carried by no instance until then.
   */
  async answerVendorCaller(line: InboundLine, caller: InboundCaller): Promise<InboundAnswer> {
    if (!line.answers) return { refused: "declined" };
    let fromNumber: string;
    try {
      fromNumber = normalizeCallee(caller.fromNumber);
    } catch (error) {
      if (error instanceof RequestValidationError) return { refused: "declined" };
      throw error;
    }
    const resolved = await this.deps.projects.resolveById(line.organizationId, line.projectId);
    const provider = resolved.config.voice.provider;
    const inserted = await this.insertInbound(resolved, { provider, fromNumber, toNumber: caller.toNumber, accountId: line.accountId, owner: null });
    if (!inserted) return { refused: "busy" };
    await this.deps.vendor.bind(inserted.id, provider, caller.vendorCallId);
    const answered = this.carriedByVendor(provider) ? await this.deps.lifecycle.connected(inserted.id, caller.startedAt) : await this.deps.lifecycle.answered(inserted.id);
    if (!answered) return { refused: "busy" };
    return { call: (await this.deps.calls.findById(inserted.id)) ?? inserted };
  }

  /** An inbound call, `queued` for the moment before it is answered (unannounced): on the caller's thread, by its alias. */
  private async insertInbound(
    resolved: ResolvedProject,
    line: { provider: string; fromNumber: string; toNumber: string; accountId: string; owner: string | null },
  ): Promise<CallRecord | undefined> {
    const organizationId = resolved.project.organization_id;
    const thread = await this.deps.threads.findOrCreateByAlias(organizationId, line.fromNumber, resolved.project.id);
    return this.deps.calls.insert({
      ...newCallOf(organizationId, thread.id, resolved, "inbound"),
      provider: line.provider,
      callType: "phone_call",
      status: "queued",
      fromNumber: line.fromNumber,
      toNumber: line.toNumber,
      voiceProviderAccountId: line.accountId,
      scheduledFor: null,
      owner: line.owner,
      appointmentOpeningId: null,
      verificationCodeSealed: null,
    });
  }

  /** Cancels the thread's scheduled or queued phone call, or stops its ongoing one. */
  async endPhoneCall(organizationId: string, threadId: string): Promise<{ response: string }> {
    await this.deps.threads.get(organizationId, threadId);
    // The call may move on between reading it and ending it (queued → ongoing): then the next reason applies.
    for (let attempt = 0; attempt < 3; attempt++) {
      const call = await this.deps.calls.activePhoneCall(organizationId, threadId);
      if (!call) break;
      if (await this.deps.lifecycle.finish(call.id, call.status === "ongoing" ? "manual_stopped" : "cancelled")) return { response: "Call ended" };
    }
    throw new NotFoundError("No active phone call on this thread");
  }

  async createWebCall(organizationId: string, threadId: string, input: { projectId: string; voiceProviderAccountId?: string }): Promise<{ status: string; message: string }> {
    const thread = await this.deps.threads.get(organizationId, threadId);
    const resolved = await this.deps.projects.resolveById(organizationId, input.projectId);
    this.requirePublicAddress(resolved, input.projectId);
    const accountId = input.voiceProviderAccountId;
    if (accountId !== undefined && !resolved.config.voice.accounts.some((account) => account.id.toLowerCase() === accountId)) {
      throw valueError(["body", "voice_provider_account_id"], "not a voice provider account of this project", accountId);
    }
    const call = await this.deps.db.transaction(async (tx) => {
      const inserted = await this.deps.calls.insert(
        {
          ...newCallOf(organizationId, thread.id, resolved, null),
          callType: "web_call",
          status: "queued",
          fromNumber: null,
          toNumber: null,
          voiceProviderAccountId: accountId ?? null,
          scheduledFor: null,
          owner: this.carriedByVendor(resolved.config.voice.provider) ? null : this.deps.owner,
          appointmentOpeningId: null,
          verificationCodeSealed: null,
        },
        tx,
      );
      if (!inserted) throw new Error("a new call's id collided");
      await this.deps.lifecycle.publishUpdate(inserted, tx);
      return inserted;
    });
    await this.place(call, (request) => this.deps.provider.createWebCall(request));
    return { status: "queued", message: "Web call queued; its access token will be sent on the thread's events WebSocket as web_call.ready" };
  }

  /** Checks a web-call join token: the call must be waiting for its client, the token its own and in time. */
  async authorizeJoin(callId: string, token: string): Promise<ProviderCall> {
    const call = await this.deps.calls.findById(callId);
    // A vendor's web call is joined at the vendor, with the vendor's token: never here.
    if (!call || call.call_type !== "web_call" || this.deps.capabilities(call.provider).webCalls === "vendor") throw new NotFoundError("Call not found");
    const valid =
      call.status === "queued" &&
      call.access_token_hash !== null &&
      call.join_deadline !== null &&
      call.join_deadline.getTime() > Date.now() &&
      sameSecret(hashCredential(token), call.access_token_hash);
    if (!valid) throw new ForbiddenError("Invalid or expired call token");
    return this.agentFor(call);
  }

  join(request: ProviderCall, client: WebCallClient, options: { audio: boolean }): WebCallConnection {
    return this.deps.provider.join(request, client, options);
  }

  async list(organizationId: string, query: CallListQuery): Promise<{ calls: CallSummaryView[]; pagination: { cursor: string | null } }> {
    const filters: CallFilters = {
      ...(query.statuses ? { statuses: query.statuses } : {}),
      ...(query.callTypes ? { callTypes: query.callTypes } : {}),
      ...(query.directions ? { directions: query.directions } : {}),
      ...(query.from ? { from: query.from } : {}),
      ...(query.to?.wholeDay ? { toExclusive: new Date(query.to.at.getTime() + dayMs) } : query.to ? { toInclusive: query.to.at } : {}),
      ...(query.threadId !== undefined ? { threadId: query.threadId } : {}),
      ...(query.projectName !== undefined ? { projectName: query.projectName } : {}),
      ...(query.cursor !== undefined ? { after: decodeListCursor(query.cursor) } : {}),
    };
    const rows = await this.deps.calls.list(organizationId, filters, query.limit + 1);
    const page = rows.slice(0, query.limit);
    const last = page.at(-1);
    return { calls: page.map(callSummary), pagination: { cursor: rows.length > query.limit && last ? encodeListCursor(last) : null } };
  }

  async detail(organizationId: string, callId: string, recordingUrl: (callId: string, recordingKey: string) => Promise<string>): Promise<CallDetailView> {
    const call = await this.deps.calls.find(organizationId, callId);
    if (!call) throw new NotFoundError("Call not found");
    const utterances = await this.deps.calls.utterances(call.thread_id, call.id);
    return callDetail(call, utterances, call.recording_key ? await recordingUrl(call.id, call.recording_key) : call.vendor_recording_url);
  }

  /** The stored recording of a call, for a request whose signed URL was already checked. */
  async recordingKey(callId: string): Promise<string> {
    const call = await this.deps.calls.findById(callId);
    if (!call?.recording_key) throw new NotFoundError("Recording not found");
    return call.recording_key;
  }

  private async startScheduled(callId: string): Promise<void> {
    const scheduled = await this.deps.calls.findById(callId);
    if (!scheduled) return;
    const owner = this.carriedByVendor(scheduled.provider) ? null : this.deps.owner;
    const call = await this.deps.db.transaction(async (tx) => {
      const promoted = await this.deps.calls.promote(callId, owner, tx);
      if (promoted) await this.deps.lifecycle.publishUpdate(promoted, tx);
      return promoted;
    });
    if (call) await this.dial(call);
  }

  private async processResults(callId: string): Promise<void> {
    const updated = await this.deps.results.process(callId);
    if (updated) await this.deps.db.transaction((tx) => this.deps.lifecycle.publishAnalyzed(updated, tx));
  }

  private async dial(call: CallRecord): Promise<void> {
    await this.place(call, (request) =>
      this.deps.provider.createPhoneCall({ ...request, fromNumber: call.from_number ?? "", toNumber: call.to_number ?? "" }),
    );
  }

  /**
   * Hands a call to the provider; a provider that refuses it (or does not answer in time) ends it as
   * `error_provider` and the request fails upstream, saying why. A vendor's id for the call is recorded before its
   * web-call token goes out, so that the vendor's socket and webhooks find the call however fast they come.
   */
  private async place(call: CallRecord, create: (request: ProviderCall) => Promise<PlacedCall | void>): Promise<void> {
    let placed: PlacedCall | void;
    try {
      placed = await create(await this.agentFor(call));
    } catch (error) {
      this.deps.log.error({ err: error, callId: call.id }, "the voice provider refused a call");
      await this.deps.lifecycle.finish(call.id, "error_provider");
      throw new UpstreamError(`Voice provider failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    if (placed?.providerCallId) {
      const bound = await this.deps.vendor.bind(call.id, call.provider, placed.providerCallId);
      // Cancelled while the vendor was dialing: the vendor learns of it now that the call has its id.
      if (bound && bound.status !== "queued" && bound.status !== "ongoing") await this.hangUpAtVendor(call.id);
    }
    if (placed?.webCallAccessToken) await this.deps.lifecycle.webCallReady(call.id, placed.webCallAccessToken);
  }

  /** Ends, at its vendor, a call that Parley ended; a vendor that fails is logged (the call is over here either way). */
  private async hangUpAtVendor(callId: string): Promise<void> {
    try {
      const call = await this.deps.calls.findById(callId);
      if (!call?.provider_call_id || !this.deps.provider.hangUp) return;
      const resolved = await this.resolveVersion(call);
      await this.deps.provider.hangUp({ callId, providerCallId: call.provider_call_id, config: resolved.config, secrets: resolved.secrets });
    } catch (error) {
      this.deps.log.warn({ err: error, callId }, "ending a call at its voice provider failed");
    }
  }

  /** A call the vendor carries has no owner here: no instance of Parley holds its live part. */
  private carriedByVendor(provider: string): boolean {
    return this.deps.capabilities(provider).carries === "vendor";
  }

  /** Hands a live phone call to `number` at its vendor (the agent's `transfer_call`); throws when the vendor refuses. */
  async transfer(callId: string, number: string): Promise<void> {
    const call = await this.deps.calls.findById(callId);
    if (!call?.provider_call_id || !this.deps.provider.transfer) throw new Error("the call has no vendor call to transfer");
    const resolved = await this.resolveVersion(call);
    await this.deps.provider.transfer({ callId, providerCallId: call.provider_call_id, config: resolved.config, secrets: resolved.secrets }, number);
  }

  /** A vendor reaches Parley at `PUBLIC_BASE_URL`; without it, its webhooks and sockets could never arrive. */
  private requirePublicAddress(resolved: ResolvedProject, projectId: string): void {
    const provider = resolved.config.voice.provider;
    if (this.deps.capabilities(provider).callsBack && !this.deps.publicBaseUrl) {
      throw valueError(
        ["body", "project_id"],
        `the project's voice provider (${provider}) reaches this server at PUBLIC_BASE_URL, which is not set: set it to the public https address of this server`,
        projectId,
      );
    }
  }

  /**
   * The call as a provider sees it, with the agent session that answers for the thread's project; `recorded`
   * utterances of the transcript the provider will feed it are in the thread's history already. An inbound caller's
   * earlier conversations go before the call's own transcript.
   */
  async agentFor(call: CarrierCall, recorded = 0): Promise<ProviderCall> {
    const history = await this.earlierHistory(call);
    const resolved = await this.resolveVersion(call);
    const thread = await this.deps.threads.get(call.organization_id, call.thread_id);
    const agent = resolved.config.agent;
    const session = callAgent(
      this.deps,
      call,
      thread,
      agent,
      (context) => this.deps.llm(agent, resolved.secrets.agentApiKey, context),
      resolved.secrets.toolSecret,
      recorded,
      history,
    );
    const { sttApiKey, ttsApiKey } = resolved.secrets;
    const speechKeys = { ...(sttApiKey ? { sttApiKey } : {}), ...(ttsApiKey ? { ttsApiKey } : {}) };
    return { callId: call.id, config: resolved.config, secrets: resolved.secrets, agent: session, speechKeys, context: thread.context };
  }

  /**
   * An inbound caller continues the thread (decisions.md): the agent sees the latest messages of the thread's earlier
   * conversations, oldest first, before the call's own transcript.
   */
  private async earlierHistory(call: CarrierCall): Promise<PromptHistory> {
    if (call.direction !== "inbound" || call.conversation_id === null) return [];
    const { config } = await this.resolveVersion(call);
    const limit = config.agent.max_history_messages;
    if (limit <= 0) return [];
    const conversationId = call.conversation_id;
    const latest = await this.deps.messages.olderThanOrAt(call.thread_id, null, limit * 2);
    return latest
      .filter((message) => message.conversation_id < conversationId)
      .slice(0, limit)
      .reverse()
      .map((message) => ({ role: message.role, content: message.content }));
  }

  /** The project version a call was created with: its settings and credentials. */
  resolveVersion(call: CarrierCall): Promise<ResolvedProject> {
    return this.deps.projects.resolveById(call.organization_id, call.project_id, call.config_version_id);
  }
}

type PromptHistory = { role: "user" | "assistant"; content: string }[];

/**
 * What every new call records: a fresh id, its organization and thread, the project version it runs on, and what it
 * takes from that version: its provider and its maximum length (the inbound one for an inbound call).
 */
function newCallOf(organizationId: string, threadId: string, resolved: ResolvedProject, direction: CallDirection | null) {
  const { config } = resolved;
  return {
    id: uuidv7(),
    organizationId,
    threadId,
    projectId: resolved.project.id,
    configVersionId: resolved.configVersionId,
    direction,
    provider: config.voice.provider,
    maxCallSeconds: direction === "inbound" ? inboundSettingsOf(config).max_call_seconds : config.voice.max_call_seconds,
  };
}
