/**
 * The shapes of a simulation run, as the interface returns and stores them (hence the wire's snake_case names).
 * See docs/simulation.md.
 */

/** Where a turn came from: the request's `message`, one of its `initial_messages`, the simulated user, the agent. */
export type TurnSource = "message" | "scripted" | "simulated" | "agent";

export interface SimulationTurn {
  role: "user" | "assistant";
  message: string;
  source: TurnSource;
}

export type StopReason = "max_turns" | "user_ended" | "agent_ended";

export interface CriterionResult {
  key: string;
  passed: boolean;
  /** 0 to 1. */
  score: number;
  reasoning: string;
}

export interface Evaluation {
  verdict: "pass" | "fail";
  score: number;
  judge: "llm" | "heuristic";
  criteria: CriterionResult[];
  /** Why the heuristic judge stands in for the model's, when the model judge failed. */
  note?: string;
}

export interface Criterion {
  key: string;
  description: string;
  /** A required criterion that fails makes the verdict "fail". */
  required: boolean;
}

/** Who the simulated user is: any field may be absent. */
export interface Persona {
  agentType?: string;
  industry?: string;
  topic?: string;
  behaviouralPrompt?: string;
}

/** The `simulate` object of POST /chat, defaults applied. */
export interface SimulateSettings extends Persona {
  initialMessages: string[];
  maxTurns: number;
  create: boolean;
  evaluate: boolean;
}

export const DEFAULT_MAX_TURNS = 5;
export const MAX_TURNS_LIMIT = 50;

/** The `simulate` object as stored with a run and shown by GET /simulations/{id}. */
export interface SimulateSettingsView {
  initial_messages: string[];
  max_turns: number;
  agent_type: string | null;
  industry: string | null;
  topic: string | null;
  behavioural_prompt: string | null;
  create: boolean;
  evaluate: boolean;
}

export function settingsView(settings: SimulateSettings): SimulateSettingsView {
  return {
    initial_messages: settings.initialMessages,
    max_turns: settings.maxTurns,
    agent_type: settings.agentType ?? null,
    industry: settings.industry ?? null,
    topic: settings.topic ?? null,
    behavioural_prompt: settings.behaviouralPrompt ?? null,
    create: settings.create,
    evaluate: settings.evaluate,
  };
}

/** What a run returns in `extras.simulation`. */
export interface SimulationOutcome {
  id: string;
  /** The SIMULATION thread holding the conversation; null for a dry run. */
  thread_id: string | null;
  turns: SimulationTurn[];
  stop_reason: StopReason;
  evaluation?: Evaluation;
}

/** A stored run, as GET /simulations/{id} returns it. */
export interface SimulationRunView extends SimulationOutcome {
  thread_id: string;
  source_thread_id: string;
  project_name: string;
  config_version_id: string;
  simulate: SimulateSettingsView;
  created_at: string;
}

/** The "[END]" a simulated user played by a model writes when it is done (see persona.ts). */
export const END_MARKER = "[END]";
