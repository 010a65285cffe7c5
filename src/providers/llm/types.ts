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

/** A function the model may call: its arguments are described by `parameters`, a JSON Schema of an object. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  /** The tool ends the call (`end_call`): the built-in agent, which reads no descriptions, calls it on a farewell. */
  endsCall?: boolean;
}

/** A call the model asked for; `arguments` is the JSON text it wrote, which may not parse. */
export interface ToolCallRequest {
  id: string;
  name: string;
  arguments: string;
}

/** One finished round of a turn: what the model said and asked for, then what each call gave back. */
export interface ToolRound {
  text: string;
  calls: ToolCallRequest[];
  results: { id: string; content: string }[];
}

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
}

/**
 * What one model request yields: text deltas as they arrive, then, once the response is complete, the tool calls it
 * asked for (all of one round together) and the tokens it used, when the vendor reports them.
 */
export type LlmOutput =
  | { type: "text"; text: string }
  | { type: "tool_calls"; calls: ToolCallRequest[] }
  | { type: "usage"; usage: TokenUsage };

export interface LlmRequest {
  messages: PromptMessage[];
  task: AgentTask;
  signal?: AbortSignal;
  structuredOutput?: StructuredOutput;
  /** Functions offered to the model. */
  tools?: ToolSpec[];
  /** "none" keeps the tools (earlier rounds refer to them) but asks for an answer without calling any. */
  toolChoice?: "auto" | "none";
  /** The rounds of this turn so far, after `messages`. */
  toolRounds?: ToolRound[];
  /** False when nothing reads the text as it comes (a whole reply): a provider that has it at once may yield it in one piece. */
  streamed?: boolean;
}

export interface LlmProvider {
  readonly name: string;
  /** Yields text deltas; throws ProviderError. Retries (once, before the first delta) happen inside. */
  stream(request: LlmRequest): AsyncIterable<string>;
  /** The same request with tool calls and usage besides the text; an adapter that calls no tools yields text only. */
  respond(request: LlmRequest): AsyncIterable<LlmOutput>;
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
