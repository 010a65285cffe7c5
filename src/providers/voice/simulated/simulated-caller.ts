import type { ProjectConfig } from "../../../domain/projects/project-config.js";

const opening = "Hello?";
const closing = "Thanks, that's all I needed. Goodbye.";
const questionsAsked = 2;

/**
 * What the simulated callee says, in order: the project's `voice.simulated.script`, or else a caller played by the
 * built-in agent: a greeting (not when it rang and the agent greeted first: `agentGreeted`), the first questions of
 * the agent's knowledge (so that the agent has something to answer), and a goodbye. Deterministic, so that tests and
 * demos always hear the same call.
 */
export function simulatedCallerLines(config: ProjectConfig, agentGreeted = false): string[] {
  if (config.voice.simulated.script) return [...config.voice.simulated.script];
  const questions = config.agent.knowledge.slice(0, questionsAsked).map((entry) => entry.question);
  return [...(agentGreeted ? [] : [opening]), ...(questions.length > 0 ? questions : ["What can you help me with?"]), closing];
}
