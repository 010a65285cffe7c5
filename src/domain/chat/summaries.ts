import type { MessagesRepository } from "../history/messages-repository.js";
import type { ConversationsRepository } from "./conversations-repository.js";
import type { LlmFactory } from "./chat-service.js";
import { NotFoundError } from "../shared/errors.js";
import { generateText } from "./generation.js";
import type { ProjectService } from "../projects/project-service.js";
import { buildPrompt } from "./prompt.js";
import type { ThreadService } from "../threads/thread-service.js";

/** How much of a long conversation the summary reads: its latest messages. */
const summaryWindow = 200;

/** A summary of the thread's latest conversation from the project's model (the built-in agent is extractive). */
export class SummaryService {
  constructor(
    private readonly threads: ThreadService,
    private readonly projects: ProjectService,
    private readonly conversations: ConversationsRepository,
    private readonly messages: MessagesRepository,
    private readonly llm: LlmFactory,
  ) {}

  async latestConversation(organizationId: string, threadId: string): Promise<string> {
    const thread = await this.threads.get(organizationId, threadId);
    const latest = await this.conversations.latest(thread.id);
    if (!latest) throw new NotFoundError("The thread has no conversation to summarize");
    const projectId = latest.project_id ?? thread.project_id;
    const project = projectId ? await this.projects.findById(organizationId, projectId) : undefined;
    if (!project) throw new NotFoundError("The thread has no project to summarize with");
    const { config, secrets } = await this.projects.resolve(project);
    const history = await this.messages.latestOfConversation(thread.id, latest.conversation_id, summaryWindow);
    const prompt = buildPrompt({
      systemPrompt: config.agent.system_prompt,
      context: thread.context,
      timezone: thread.timezone,
      now: new Date(),
      history,
      instruction: config.agent.summary_prompt,
    });
    return generateText(this.llm(config.agent, secrets.agentApiKey), prompt, "summary");
  }
}
