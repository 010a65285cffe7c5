import type { ThreadRecord } from "../threads/threads-repository.js";
import type { ChatService, LlmFactory } from "../chat/chat-service.js";
import { NotFoundError, UpstreamError, valueError } from "../shared/errors.js";
import { generateText } from "../chat/generation.js";
import { uuidv7 } from "../shared/ids.js";
import { DEFAULT_SIMULATION_CRITERIA, simulationSettingsOf, type ProjectConfig } from "../projects/project-config.js";
import type { ResolvedProject } from "../projects/project-service.js";
import { buildPrompt } from "../chat/prompt.js";
import type { ThreadService } from "../threads/thread-service.js";
import { BuiltinSimulatedUser } from "./builtin-persona.js";
import { heuristicJudge, modelJudge, type JudgeInput } from "./judge.js";
import { ModelSimulatedUser, type SimulatedUser } from "./persona.js";
import {
  settingsView,
  type Criterion,
  type Evaluation,
  type SimulateSettings,
  type SimulationOutcome,
  type SimulationRunView,
  type SimulationTurn,
  type StopReason,
} from "./simulation.js";
import type { SimulationRecord, SimulationsRepository } from "./simulations-repository.js";
import { isFarewell } from "./text-signals.js";

export interface SimulationRequest {
  organizationId: string;
  /** The thread the request names: its context and time zone are the simulation's; nothing is written to it. */
  sourceThreadId: string;
  projectName: string;
  configVersionId?: string;
  /** The simulated user's first message. */
  message: string;
  userType: string;
  settings: SimulateSettings;
  /** Each piece of text of each turn as it is produced, with the turn's index in `turns`. */
  onToken?: (token: string, turn: number) => void;
}

export interface SimulationResult {
  /** The agent's last reply. */
  message: string;
  /** Ids of the last turn in the SIMULATION thread; null in a dry run. */
  userMessageId: string | null;
  conversationId: number | null;
  replyMessageId: string | null;
  simulation: SimulationOutcome;
}

interface AgentReply {
  message: string;
  ids: { userMessageId: string | null; conversationId: number; replyMessageId: string } | null;
}

/** The agent under test, answering one user turn at a time. */
type AgentSide = (userTurn: SimulationTurn, onToken: (token: string) => void) => Promise<AgentReply>;

/** The model settings of the simulated user and the judge: `simulation.provider`'s when set, else the agent's own. */
function simulationModel(resolved: ResolvedProject): { agent: ProjectConfig["agent"]; apiKey: string | undefined } {
  const { agent } = resolved.config;
  const simulation = simulationSettingsOf(resolved.config);
  if (simulation.provider === null) return { agent, apiKey: resolved.secrets.agentApiKey };
  return {
    agent: { ...agent, provider: simulation.provider, model: simulation.model, base_url: simulation.base_url, temperature: simulation.temperature },
    apiKey: resolved.secrets.simulationApiKey,
  };
}

/**
 * Simulated conversations with a project's agent (the `simulate` object of POST /chat): the request's message and
 * scripted turns, then a simulated user, until `max_turns` user turns or until a side ends the conversation;
 * optionally stored in a new SIMULATION thread (through the chat path, so it is billed, numbered and announced like
 * any chat) and judged. See docs/simulation.md.
 */
export class SimulationService {
  constructor(
    private readonly threads: ThreadService,
    private readonly chat: ChatService,
    private readonly llm: LlmFactory,
    private readonly store: SimulationsRepository,
  ) {}

  async run(request: SimulationRequest): Promise<SimulationResult> {
    const { settings } = request;
    const userTurnsGiven = 1 + settings.initialMessages.length;
    if (userTurnsGiven > settings.maxTurns) {
      throw valueError(
        ["body", "simulate", "initial_messages"],
        `message and initial_messages make ${userTurnsGiven} user turns, more than max_turns (${settings.maxTurns})`,
        settings.initialMessages,
      );
    }
    const source = await this.threads.get(request.organizationId, request.sourceThreadId);
    const resolved = await this.chat.resolveProject(request.organizationId, request.projectName, request.configVersionId);
    const id = uuidv7();
    const threadId = settings.create ? await this.threads.createSimulationThread(source, resolved.project.id) : null;
    const agent = threadId ? this.storedAgent(request, resolved, threadId, id) : this.dryRunAgent(resolved, source);
    const model = simulationModel(resolved);
    const user: SimulatedUser =
      model.agent.provider === "builtin"
        ? new BuiltinSimulatedUser(settings, resolved.config.agent.knowledge.map((entry) => entry.question))
        : new ModelSimulatedUser(this.llm(model.agent, model.apiKey), settings);

    const { turns, stopReason, last } = await this.converse(request, user, agent);
    const outcome: SimulationOutcome = { id, thread_id: threadId, turns, stop_reason: stopReason };
    if (threadId) {
      await this.store.insert({
        id,
        organizationId: request.organizationId,
        projectId: resolved.project.id,
        projectName: resolved.project.name,
        configVersionId: resolved.configVersionId,
        sourceThreadId: source.id,
        threadId,
        settings: settingsView(settings),
        turns,
        stopReason,
        evaluation: null,
      });
    }
    if (settings.evaluate) {
      outcome.evaluation = await this.evaluate(resolved, { turns, stopReason, persona: settings, criteria: this.criteria(resolved) });
      if (threadId) await this.store.setEvaluation(request.organizationId, id, outcome.evaluation);
    }
    return {
      message: last.message,
      userMessageId: last.ids?.userMessageId ?? null,
      conversationId: last.ids?.conversationId ?? null,
      replyMessageId: last.ids?.replyMessageId ?? null,
      simulation: outcome,
    };
  }

  async get(organizationId: string, id: string): Promise<SimulationRunView> {
    const record = /^[0-9a-f-]{36}$/i.test(id) ? await this.store.find(organizationId, id) : undefined;
    if (!record) throw new NotFoundError("Simulation not found");
    return runView(record);
  }

  private async converse(
    request: SimulationRequest,
    user: SimulatedUser,
    agent: AgentSide,
  ): Promise<{ turns: SimulationTurn[]; stopReason: StopReason; last: AgentReply }> {
    const { settings } = request;
    const scripted: SimulationTurn[] = [
      { role: "user", message: request.message, source: "message" },
      ...settings.initialMessages.map((message): SimulationTurn => ({ role: "user", message, source: "scripted" })),
    ];
    const turns: SimulationTurn[] = [];
    const emit = (token: string): void => request.onToken?.(token, turns.length);
    let userTurns = 0;
    let last: AgentReply | undefined;
    let stopReason: StopReason = "max_turns";
    while (userTurns < settings.maxTurns) {
      let userTurn = scripted[userTurns];
      let userEnded = false;
      if (userTurn) {
        emit(userTurn.message);
      } else {
        const next = await user.next(turns, settings.maxTurns - userTurns, emit);
        userEnded = next.ended;
        if (next.message === "") {
          stopReason = "user_ended";
          break;
        }
        userTurn = { role: "user", message: next.message, source: "simulated" };
      }
      turns.push(userTurn);
      userTurns++;
      last = await agent(userTurn, emit);
      turns.push({ role: "assistant", message: last.message, source: "agent" });
      if (userEnded) {
        stopReason = "user_ended";
        break;
      }
      if (last.message.trim() === "" || isFarewell(last.message)) {
        stopReason = "agent_ended";
        break;
      }
    }
    // The request's message is always played, so the agent has replied at least once.
    return { turns, stopReason, last: last! };
  }

  /** The agent answering in memory, with the prompt a chat on the source thread would get; nothing is written. */
  private dryRunAgent(resolved: ResolvedProject, source: ThreadRecord): AgentSide {
    const { agent } = resolved.config;
    const provider = this.llm(agent, resolved.secrets.agentApiKey);
    const history: SimulationTurn[] = [];
    return async (userTurn, onToken) => {
      history.push(userTurn);
      const prompt = buildPrompt({
        systemPrompt: agent.system_prompt,
        context: source.context,
        timezone: source.timezone,
        now: new Date(),
        // As a chat turn: the conversation's latest messages, the new one included.
        history: history.slice(-(agent.max_history_messages + 1)).map((turn) => ({ role: turn.role, content: turn.message })),
      });
      const message = await generateText(provider, prompt, "reply", onToken);
      history.push({ role: "assistant", message, source: "agent" });
      return { message, ids: null };
    };
  }

  /** The agent answering through the chat path on the SIMULATION thread: stored, billed and announced as any chat. */
  private storedAgent(request: SimulationRequest, resolved: ResolvedProject, threadId: string, simulationId: string): AgentSide {
    return async (userTurn, onToken) => {
      const result = await this.chat.turn({
        organizationId: request.organizationId,
        threadId,
        projectName: resolved.project.name,
        configVersionId: resolved.configVersionId,
        startNewConversation: false,
        userMessage: { content: userTurn.message, extras: { user_type: request.userType, simulation_id: simulationId, source: userTurn.source } },
        task: "reply",
        onToken,
      });
      return {
        message: result.message,
        ids: { userMessageId: result.userMessageId, conversationId: result.conversationId, replyMessageId: result.replyMessageId },
      };
    };
  }

  private criteria(resolved: ResolvedProject): Criterion[] {
    return [...DEFAULT_SIMULATION_CRITERIA, ...simulationSettingsOf(resolved.config).criteria];
  }

  /**
   * The model's judgement when the project has a model; otherwise, or when the model judge fails (its provider, or
   * its answer twice not in the schema), the heuristic judge's, which then says why in `note`: the conversation is
   * already held, and a judge's failure must not lose it.
   */
  private async evaluate(resolved: ResolvedProject, input: Omit<JudgeInput, "agentFallback">): Promise<Evaluation> {
    const model = simulationModel(resolved);
    const { agent } = resolved.config;
    const heuristic = () => heuristicJudge({ ...input, ...(agent.provider === "builtin" ? { agentFallback: agent.fallback } : {}) });
    if (model.agent.provider === "builtin") return heuristic();
    try {
      return await modelJudge(this.llm(model.agent, model.apiKey), input);
    } catch (error) {
      if (!(error instanceof UpstreamError)) throw error;
      return { ...heuristic(), note: `The model judge gave no judgement (${error.message}), so the heuristic judge's is given instead.` };
    }
  }
}

function runView(record: SimulationRecord): SimulationRunView {
  return {
    id: record.id,
    thread_id: record.threadId,
    source_thread_id: record.sourceThreadId,
    project_name: record.projectName,
    config_version_id: record.configVersionId,
    simulate: record.settings,
    turns: record.turns,
    stop_reason: record.stopReason,
    ...(record.evaluation ? { evaluation: record.evaluation } : {}),
    created_at: record.createdAt.toISOString(),
  };
}
