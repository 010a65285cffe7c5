import type { AgentTask, LlmProvider, PromptMessage } from "../../providers/llm/types.js";
import type { ConversationsRepository } from "./conversations-repository.js";
import type { ThreadRecord } from "../threads/threads-repository.js";
import type { ThreadLocks } from "../threads/thread-locks.js";
import type { OpenedTurn, TurnsRepository } from "./turns-repository.js";
import { InvalidOperationError, NotFoundError } from "../shared/errors.js";
import { generateReply, type AgentReply } from "./agent-reply.js";
import { sameHistory, type ConversationRecall } from "./conversation-recall.js";
import { uuidv7 } from "../shared/ids.js";
import type { ProjectConfig } from "../projects/project-config.js";
import type { ProjectService, ResolvedProject } from "../projects/project-service.js";
import { changeTags, type Invalidations } from "../cache/invalidation.js";
import { buildPrompt } from "./prompt.js";
import type { TaggedCache } from "../cache/tagged-cache.js";
import type { ThreadService } from "../threads/thread-service.js";
import { toolsOf } from "../projects/project-config.js";
import { ToolRunner, type ToolCallOrigin, type ToolCallRecord } from "../tools/tool-runner.js";
import type { ToolTransport } from "../tools/ports.js";

/** What the agent's tools need from outside the domain: a way to send their requests, and the thread's event log. */
export interface ChatToolSupport {
  transport: ToolTransport;
  /** Appends a `tool.called` event to the thread's events. */
  announce(threadId: string, payload: Record<string, unknown>): Promise<void>;
}

export type LlmFactory = (agent: ProjectConfig["agent"], apiKey: string | undefined, context?: Readonly<Record<string, unknown>>) => LlmProvider;

export interface TurnRequest {
  organizationId: string;
  threadId: string;
  projectName: string;
  configVersionId?: string;
  startNewConversation: boolean;
  /** The user's message; absent for a proactive follow-up. */
  userMessage?: { content: string; extras: Record<string, unknown> };
  task: Extract<AgentTask, "reply" | "followup">;
  onToken?: (token: string) => void;
}

/** What a turn reads before it starts: the thread's prompt inputs and the project's configuration. */
export interface TurnSetup {
  thread: Pick<ThreadRecord, "id" | "context" | "timezone">;
  resolved: ResolvedProject;
}

/** An estimate of a setup's memory: its thread's context (the project's configuration is shared with other entries). */
export function turnSetupSize(setup: TurnSetup): number {
  return 2 * JSON.stringify(setup.thread.context).length + 1024;
}

export interface TurnResult {
  message: string;
  userMessageId: string | null;
  conversationId: number;
  replyMessageId: string;
  /** The tool calls of the turn, in the order the model made them. */
  toolCalls: ToolCallRecord[];
}

/**
 * Runs `generate` while `durable` (the commit of the user's message) is pending, holding back its tokens until it is
 * durable: no token reaches `onToken` before then. A commit that fails aborts the generation and is the turn's
 * failure, whatever the model did meanwhile; a generation that fails is reported once the message is durable (it is
 * kept when the model fails).
 */
async function generateOnceDurable<T>(
  durable: Promise<void>,
  generate: (onToken: ((token: string) => void) | undefined, signal: AbortSignal) => Promise<T>,
  onToken: ((token: string) => void) | undefined,
): Promise<T> {
  const abort = new AbortController();
  let held: string[] | undefined = [];
  const released = durable.then(
    () => {
      const waiting = held ?? [];
      held = undefined;
      for (const token of waiting) onToken?.(token);
    },
    () => abort.abort(),
  );
  const pass = onToken && ((token: string) => (held ? held.push(token) : onToken(token)));
  let generated: T;
  try {
    generated = await generate(pass, abort.signal);
  } catch (error) {
    await durable;
    throw error;
  }
  await durable;
  await released;
  return generated;
}

/** The model's messages for a turn that read `history`. */
function turnPrompt(thread: TurnSetup["thread"], agent: ProjectConfig["agent"], task: TurnRequest["task"], history: OpenedTurn["history"]): PromptMessage[] {
  return buildPrompt({
    systemPrompt: agent.system_prompt,
    context: thread.context,
    timezone: thread.timezone,
    now: new Date(),
    history,
    instruction: task === "followup" ? agent.followup_prompt : undefined,
  });
}

/**
 * How a turn generates its reply from a prompt: the generation, given the tokens' receiver and an abort signal, with
 * its tools run once `ready` settles. Made by a function rather than bound to a name in the turn, where tsx (which
 * keeps names) gave each such closure its name with a `defineProperty` call on every turn.
 */
function replyGeneration(provider: LlmProvider, task: TurnRequest["task"], runner: ToolRunner, origin: ToolCallOrigin, onToolCall: (record: ToolCallRecord) => Promise<void>) {
  return (prompt: PromptMessage[], ready: Promise<void> | undefined) => (onToken: ((token: string) => void) | undefined, signal?: AbortSignal) =>
    generateReply(provider, prompt, task, onToken, { runner, origin, onToolCall, ready }, signal);
}

/** Why a guessed history's generation was dropped: the statement read another history. */
const wrongGuess = new Error("the history read differs from the one guessed");

/**
 * Starts `generate` on a guessed history once the turn's statement has been sent (so that building the model's
 * request does not delay it), with a promise that settles as the guess is confirmed (then as the user's message
 * becomes durable) or refused. A guess refused before it started never reaches the model.
 */
function guessAhead<T>(generate: (confirmed: Promise<void>) => Promise<T>): { confirm(durable: Promise<void>): Promise<T>; refuse(reason: unknown): Promise<void> } {
  let refusal: { reason: unknown } | undefined;
  let settle!: { resolve(durable: Promise<void>): void; reject(reason: unknown): void };
  const confirmed = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
  // A guess refused before it started has nobody waiting on it: its refusal is not an unhandled rejection.
  confirmed.catch(() => undefined);
  const generation = new Promise<void>((sent) => setImmediate(sent)).then(() => (refusal ? Promise.reject(refusal.reason) : generate(confirmed)));
  return {
    confirm(durable) {
      settle.resolve(durable);
      return generation;
    },
    async refuse(reason) {
      refusal = { reason };
      settle.reject(reason);
      await generation.catch(() => undefined);
    },
  };
}

/**
 * One turn of the agent on a thread: the user's message is stored first (it survives a provider failure; a streamed
 * turn asks the model while that happens, with the history it expects, and shows no token before the message is
 * durable and that history confirmed), the reply is generated from the conversation's history and stored with its
 * usage. Turns of one thread are serialized by the thread lock, which also spans instances on PostgreSQL; its lease
 * is taken and released by the turn's own two statements, so that nothing but the look-ups and one statement
 * precede the model's first token.
 */
export class ChatService {
  constructor(
    private readonly threads: ThreadService,
    private readonly projects: ProjectService,
    private readonly conversations: ConversationsRepository,
    private readonly turns: TurnsRepository,
    private readonly locks: ThreadLocks,
    private readonly llm: LlmFactory,
    /** Kept under the thread's setup tag and the organization's (a new project version): a turn usually starts with no look-up. */
    private readonly setups: TaggedCache<TurnSetup>,
    private readonly invalidations: Invalidations,
    private readonly tools: ChatToolSupport,
    /** The conversations as this instance's last turns left them: a streamed turn's guess at its history. */
    private readonly recall: ConversationRecall,
  ) {}

  async resolveProject(organizationId: string, projectName: string, configVersionId?: string): Promise<ResolvedProject> {
    const project = await this.projects.findByName(organizationId, projectName);
    if (!project) throw new NotFoundError("Project not found");
    return this.projects.resolve(project, configVersionId);
  }

  /**
   * Runs a turn; this instance's cached pages of the thread are dropped once it is over, failed or not (a failed turn
   * keeps the user's message), so that its client reads its own write here at once.
   */
  turn(request: TurnRequest): Promise<TurnResult> {
    return this.invalidations.changing(changeTags.thread(request.threadId), () => this.runTurn(request));
  }

  private async runTurn(request: TurnRequest): Promise<TurnResult> {
    const { thread, resolved } = await this.setup(request);
    const agent = resolved.config.agent;
    const userMessage = request.userMessage ? { id: uuidv7(), ...request.userMessage } : null;
    const userMessageId = userMessage?.id ?? null;
    const replyId = uuidv7();
    const runner = new ToolRunner(toolsOf(agent), resolved.secrets.toolSecret, this.tools.transport, "chat");
    const provider = this.llm(agent, resolved.secrets.agentApiKey, thread.context);
    let attempts = 0;
    return this.locks.withLeasedWork(thread.id, async (lease) => {
      const opening = {
        threadId: thread.id,
        projectId: resolved.project.id,
        startNewConversation: request.startNewConversation,
        userMessage,
        historyLimit: agent.max_history_messages + (userMessage ? 1 : 0),
      };
      // The turn's conversation id reaches the tools' origin once the statement has run; no tool runs before then.
      const origin = { threadId: thread.id, conversationId: 0, messageId: userMessageId, call: null, context: thread.context };
      const generate = replyGeneration(provider, request.task, runner, origin, (record) =>
        this.tools.announce(thread.id, { conversation_id: origin.conversationId, message_id: userMessageId, reply_message_id: replyId, tool_call: record }),
      );
      let opened: OpenedTurn;
      let generated: AgentReply;
      if (!request.onToken) {
        // A whole reply is sent after the reply's own commit: it gains nothing from asking the model any sooner.
        opened = await this.turns.open(opening, lease);
        origin.conversationId = opened.conversationId;
        generated = await generate(turnPrompt(thread, agent, request.task, opened.history), undefined)(undefined);
      } else {
        // A streamed turn's first token is what its client waits for: the model is asked while the user's message is
        // stored, with the history this instance expects the statement to read (its first attempt only: a retry
        // waited for another holder of the lease, whose turn changed the history), and its tokens are held until
        // the statement has read that very history and the message is durable; else it is asked again, then.
        const predicted = userMessage && attempts++ === 0 ? this.recall.predict(request.organizationId, thread.id, userMessage.content, request.startNewConversation, opening.historyLimit) : undefined;
        const statement = this.turns.openFlushing(opening, lease);
        const guess = predicted && guessAhead((confirmed) => generateOnceDurable(confirmed, generate(turnPrompt(thread, agent, request.task, predicted), confirmed), request.onToken));
        let flushing: OpenedTurn & { durable: Promise<void> };
        try {
          flushing = await statement;
        } catch (error) {
          await guess?.refuse(error);
          throw error;
        }
        opened = flushing;
        origin.conversationId = opened.conversationId;
        const confirmed = predicted !== undefined && sameHistory(predicted, opened.history);
        if (predicted) this.recall.judged(confirmed);
        if (guess && confirmed) generated = await guess.confirm(flushing.durable);
        else {
          await guess?.refuse(wrongGuess);
          generated = await generateOnceDurable(flushing.durable, generate(turnPrompt(thread, agent, request.task, opened.history), flushing.durable), request.onToken);
        }
      }
      const reply = {
        id: replyId,
        content: generated.text,
        extras: {
          config_version_id: resolved.configVersionId,
          provider: agent.provider,
          ...(request.task === "followup" ? { followup: true } : {}),
          ...(generated.toolCalls.length > 0 ? { tool_calls: generated.toolCalls } : {}),
          ...(generated.usage ? { usage: { input_tokens: generated.usage.inputTokens, output_tokens: generated.usage.outputTokens } } : {}),
        },
      };
      const { eventSeq } = await this.turns.close({ threadId: thread.id, conversationId: opened.conversationId, reply, priceUsd: resolved.config.pricing.message_usd }, lease);
      this.recall.remember(request.organizationId, thread.id, opened.history, generated.text, eventSeq);
      return { message: generated.text, userMessageId, conversationId: opened.conversationId, replyMessageId: reply.id, toolCalls: generated.toolCalls };
    });
  }

  private setup(request: TurnRequest): Promise<TurnSetup> {
    const { organizationId, threadId, projectName, configVersionId } = request;
    const tags = [changeTags.threadSetup(threadId), changeTags.organization(organizationId)];
    return this.setups.load(JSON.stringify([organizationId, threadId, projectName, configVersionId ?? null]), tags, async () => {
      // Independent look-ups, issued together. When both fail, the thread's error is the one reported, as when they
      // ran one after the other.
      const [threadLookup, projectLookup] = await Promise.allSettled([
        this.threads.get(organizationId, threadId),
        this.resolveProject(organizationId, projectName, configVersionId),
      ]);
      if (threadLookup.status === "rejected") throw threadLookup.reason;
      if (projectLookup.status === "rejected") throw projectLookup.reason;
      const { id, context, timezone } = threadLookup.value;
      return { thread: { id, context, timezone }, resolved: projectLookup.value };
    });
  }

  /** Ends the active conversation (legacy end_conversation); refused when the thread is unknown or none is active. */
  endConversation(organizationId: string, threadId: string): Promise<number> {
    return this.invalidations.changing(changeTags.thread(threadId), () => this.endActiveConversation(organizationId, threadId));
  }

  private async endActiveConversation(organizationId: string, threadId: string): Promise<number> {
    const thread = await this.threads.find(organizationId, threadId);
    if (!thread) throw new InvalidOperationError("Thread not found");
    const ended = await this.locks.withLock(thread.id, () => this.conversations.endActive(thread.id));
    if (ended === null) throw new InvalidOperationError("The thread has no active conversation");
    return ended;
  }
}
