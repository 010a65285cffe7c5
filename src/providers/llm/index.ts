import type { ProjectConfig } from "../../domain/projects/project-config.js";
import { AnthropicProvider } from "./anthropic.js";
import { BuiltinProvider } from "./builtin.js";
import type { HttpProviderOptions } from "./http-provider.js";
import { OpenAiProvider } from "./openai.js";
import type { LlmProvider } from "./types.js";

export { ProviderError } from "./types.js";
export type { AgentTask, LlmOutput, LlmProvider, LlmRequest, PromptMessage, StructuredOutput, TokenUsage, ToolCallRequest, ToolRound, ToolSpec } from "./types.js";

/**
 * The adapter for a project's agent settings. Vendor adapters send the prompt the domain built as it is (its system
 * messages included) and take only model, temperature, max_tokens and the endpoint from the settings; the built-in
 * agent takes greeting, fallback and knowledge.
 */
export function createLlmProvider(
  agent: ProjectConfig["agent"],
  apiKey: string | undefined,
  options: HttpProviderOptions,
  /** The thread's JSON context, which vendor models read in the system prompt; the built-in agent takes it here. */
  context: Readonly<Record<string, unknown>> = {},
): LlmProvider {
  const vendor = { baseUrl: agent.base_url, model: agent.model, temperature: agent.temperature, maxTokens: agent.max_tokens, apiKey };
  switch (agent.provider) {
    case "builtin":
      return new BuiltinProvider(agent, context);
    case "openai":
      return new OpenAiProvider(vendor, options);
    case "anthropic":
      return new AnthropicProvider(vendor, options);
  }
}
