/** The one interface every model adapter implements: messages in, streamed text out. */
export interface PromptMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

/**
 * What the agent is asked to do. Vendor models get it through the prompt the domain builds; the offline
 * built-in agent, which cannot read instructions, uses it to pick its deterministic strategy.
 */
export type AgentTask = "reply" | "followup" | "summary" | "analysis";

/**
 * Asks for one JSON object matching `schema` (a JSON Schema in the strict subset vendors accept: every property
 * required, `additionalProperties: false`). OpenAI-compatible servers get it as `response_format` `json_schema`;
 * Anthropic as a forced tool call whose input is the object; the streamed text is then that object's JSON.
 */
export interface StructuredOutput {
  name: string;
  description: string;
  schema: Record<string, unknown>;
}

export interface LlmRequest {
  messages: PromptMessage[];
  task: AgentTask;
  signal?: AbortSignal;
  structuredOutput?: StructuredOutput;
}

export interface LlmProvider {
  readonly name: string;
  /** Yields text deltas; throws ProviderError. Retries (once, before the first delta) happen inside. */
  stream(request: LlmRequest): AsyncIterable<string>;
}

export class ProviderError extends Error {
  constructor(
    message: string,
    readonly options: { status?: number; retryable: boolean; timedOut?: boolean },
  ) {
    super(message);
    this.name = "ProviderError";
  }
}
