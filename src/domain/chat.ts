import type { AgentTask, LlmProvider } from "../providers/llm/types.js";
import type { Db, Queryable } from "../store/db.js";
import type { ConversationsStore, MessagesStore, Role, UsageStore } from "../store/messages-store.js";
import type { ThreadLocks } from "../store/thread-locks.js";
import { BadRequestError, NotFoundError } from "./errors.js";
import { generateText } from "./generation.js";
import { uuidv7 } from "./ids.js";
import type { ProjectConfig } from "./project-config.js";
import type { ProjectService, ResolvedProject } from "./projects.js";
import { buildPrompt } from "./prompt.js";
import type { ThreadService } from "./threads.js";

export type LlmFactory = (agent: ProjectConfig["agent"], apiKey: string | undefined) => LlmProvider;

export interface StoredMessage {
  threadId: string;
  messageId: string;
  role: Role;
  conversationId: number;
  content: string;
}

/**
 * Told of every message inside the transaction that stores it, e.g. to append it to the thread's events stream:
 * one commit for both, since every commit waits for a disk flush.
 */
export type MessageListener = (message: StoredMessage, tx: Queryable) => Promise<void>;

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

export interface TurnResult {
  message: string;
  userMessageId: string | null;
  conversationId: number;
  replyMessageId: string;
}

/**
 * One turn of the agent on a thread: the user's message is stored first (it survives a provider failure), the reply
 * is generated from the conversation's history and stored with its usage. Turns of one thread are serialized by the
 * thread lock, which also spans instances on PostgreSQL.
 */
export class ChatService {
  private readonly listeners: MessageListener[] = [];

  constructor(
    private readonly db: Db,
    private readonly threads: ThreadService,
    private readonly projects: ProjectService,
    private readonly conversations: ConversationsStore,
    private readonly messages: MessagesStore,
    private readonly usage: UsageStore,
    private readonly locks: ThreadLocks,
    private readonly llm: LlmFactory,
  ) {}

  onMessage(listener: MessageListener): void {
    this.listeners.push(listener);
  }

  async resolveProject(organizationId: string, projectName: string, configVersionId?: string): Promise<ResolvedProject> {
    const project = await this.projects.findByName(organizationId, projectName);
    if (!project) throw new NotFoundError("Project not found");
    return this.projects.resolve(project, configVersionId);
  }

  async turn(request: TurnRequest): Promise<TurnResult> {
    // Independent look-ups, issued together: one round trip of latency before the first token instead of two. When
    // both fail, the thread's error is the one reported, as when they ran one after the other.
    const [threadLookup, projectLookup] = await Promise.allSettled([
      this.threads.get(request.organizationId, request.threadId),
      this.resolveProject(request.organizationId, request.projectName, request.configVersionId),
    ]);
    if (threadLookup.status === "rejected") throw threadLookup.reason;
    if (projectLookup.status === "rejected") throw projectLookup.reason;
    const thread = threadLookup.value;
    const resolved = projectLookup.value;
    const agent = resolved.config.agent;
    return this.locks.withLock(thread.id, async () => {
      const userMessageId = request.userMessage ? uuidv7() : null;
      const { conversationId, history } = await this.db.transaction(async (tx) => {
        const { conversationId } = await this.conversations.current(thread.id, resolved.project.id, request.startNewConversation, tx);
        if (request.userMessage && userMessageId) {
          await this.messages.append(
            { id: userMessageId, threadId: thread.id, conversationId, role: "user", ...request.userMessage },
            tx,
          );
          await this.emit({ threadId: thread.id, messageId: userMessageId, role: "user", conversationId, content: request.userMessage.content }, tx);
        }
        const budget = agent.max_history_messages + (request.userMessage ? 1 : 0);
        return { conversationId, history: await this.messages.latestOfConversation(thread.id, conversationId, budget, tx) };
      });
      const prompt = buildPrompt({
        systemPrompt: agent.system_prompt,
        context: thread.context,
        timezone: thread.timezone,
        now: new Date(),
        history,
        ...(request.task === "followup" ? { instruction: agent.followup_prompt } : {}),
      });
      const text = await generateText(this.llm(agent, resolved.secrets.agentApiKey), prompt, request.task, request.onToken);
      const replyMessageId = uuidv7();
      await this.db.transaction(async (tx) => {
        await this.messages.append(
          {
            id: replyMessageId,
            threadId: thread.id,
            conversationId,
            role: "assistant",
            content: text,
            extras: { config_version_id: resolved.configVersionId, provider: agent.provider, ...(request.task === "followup" ? { followup: true } : {}) },
          },
          tx,
        );
        await this.usage.addBillableMessage(thread.id, resolved.config.pricing.message_usd, tx);
        await this.emit({ threadId: thread.id, messageId: replyMessageId, role: "assistant", conversationId, content: text }, tx);
      });
      return { message: text, userMessageId, conversationId, replyMessageId };
    });
  }

  /** Ends the active conversation (legacy end_conversation); 400 when the thread is unknown or none is active. */
  async endConversation(organizationId: string, threadId: string): Promise<number> {
    const thread = await this.threads.find(organizationId, threadId);
    if (!thread) throw new BadRequestError("Thread not found");
    const ended = await this.locks.withLock(thread.id, () => this.conversations.endActive(thread.id));
    if (ended === null) throw new BadRequestError("The thread has no active conversation");
    return ended;
  }

  private async emit(message: StoredMessage, tx: Queryable): Promise<void> {
    for (const listener of this.listeners) await listener(message, tx);
  }
}
