import { endpoint, HttpLlmProvider, type DeltaReader, type HttpCall, type HttpProviderOptions } from "./http-provider.js";
import { isRecord, parseEventJson, streamedError } from "./provider-errors.js";
import type { SseEvent } from "./sse.js";
import { ProviderError, type LlmRequest, type PromptMessage, type TokenUsage, type ToolCallRequest, type ToolRound } from "./types.js";

export interface AnthropicSettings {
  /** The API root without the version segment, e.g. `https://api.anthropic.com`. */
  baseUrl: string;
  model: string;
  temperature: number;
  maxTokens: number;
  apiKey: string | undefined;
}

export interface AnthropicTurn {
  role: "user" | "assistant";
  content: string | Record<string, unknown>[];
}

/** Stand-ins for turns the Messages API requires but a conversation may lack; kept short and neutral. */
const OPENING_TURN = "(The conversation begins.)";
const CONTINUE_TURN = "(Please continue.)";

/** Anthropic's documented error types, so that an error event mid-stream is classified like the HTTP status it stands for. */
const statusByErrorType: Record<string, number> = {
  invalid_request_error: 400,
  authentication_error: 401,
  billing_error: 402,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  timeout_error: 504,
  overloaded_error: 529,
};

/**
 * The Messages API takes the system prompt apart from the turns, and the turns must alternate and open with the
 * user. System messages are joined into `system`; consecutive turns of one role are merged; a conversation the agent
 * opened gets a neutral user turn before it; and a trailing assistant turn gets one after it, because the API would
 * otherwise treat that turn as a prefill to continue rather than a message to answer.
 */
export function toAnthropicPrompt(messages: readonly PromptMessage[]): { system: string; turns: AnthropicTurn[] } {
  const system: string[] = [];
  const turns: AnthropicTurn[] = [];
  for (const message of messages) {
    if (message.role === "system") {
      if (message.content.trim() !== "") system.push(message.content);
      continue;
    }
    const previous = turns.at(-1);
    if (previous && previous.role === message.role) previous.content = `${String(previous.content)}\n\n${message.content}`;
    else turns.push({ role: message.role, content: message.content });
  }
  if (turns[0]?.role !== "user") turns.unshift({ role: "user", content: OPENING_TURN });
  if (turns.at(-1)?.role === "assistant") turns.push({ role: "user", content: CONTINUE_TURN });
  return { system: system.join("\n\n"), turns };
}

/** A finished round as the Messages API records it: the assistant's text and `tool_use` blocks, then the user's `tool_result`s. */
function roundTurns(round: ToolRound): AnthropicTurn[] {
  return [
    {
      role: "assistant",
      content: [
        ...(round.text === "" ? [] : [{ type: "text", text: round.text }]),
        ...round.calls.map((call) => ({ type: "tool_use", id: call.id, name: call.name, input: inputObject(call.arguments) })),
      ],
    },
    { role: "user", content: round.results.map((result) => ({ type: "tool_result", tool_use_id: result.id, content: result.content })) },
  ];
}

/** `tool_use.input` must be an object; arguments the model wrote that are not one go back as an empty object. */
function inputObject(json: string): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(json);
    return isRecord(value) ? value : {};
  } catch {
    return {};
  }
}

function tokenCount(value: unknown): number | undefined {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : undefined;
}

class AnthropicDeltaReader implements DeltaReader {
  ended = false;
  usage: TokenUsage | undefined;
  /** The `tool_use` blocks of the response by their content index. */
  private readonly calls = new Map<number, ToolCallRequest>();

  constructor(
    private readonly provider: string,
    private readonly secrets: readonly (string | undefined)[],
    /** Structured output is a forced tool call whose input is the answer: its JSON pieces are the text. */
    private readonly inputIsText: boolean,
  ) {}

  get toolCallStarted(): boolean {
    return this.calls.size > 0;
  }

  toolCalls(): ToolCallRequest[] {
    return [...this.calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => ({ ...call, arguments: call.arguments === "" ? "{}" : call.arguments }));
  }

  private takeUsage(usage: unknown): void {
    if (!isRecord(usage)) return;
    this.usage = {
      inputTokens: tokenCount(usage["input_tokens"]) ?? this.usage?.inputTokens ?? 0,
      // message_delta reports the output tokens so far, not an increment.
      outputTokens: tokenCount(usage["output_tokens"]) ?? this.usage?.outputTokens ?? 0,
    };
  }

  deltaOf(event: SseEvent): string {
    const payload = parseEventJson(this.provider, event.data);
    if (!isRecord(payload)) return "";
    const type = typeof payload["type"] === "string" ? payload["type"] : event.event;
    if (type === "message_stop") {
      this.ended = true;
      return "";
    }
    if (type === "error") {
      const error = payload["error"];
      const errorType = isRecord(error) && typeof error["type"] === "string" ? error["type"] : "";
      throw streamedError(this.provider, payload, statusByErrorType[errorType], this.secrets);
    }
    if (type === "message_start" && isRecord(payload["message"])) this.takeUsage(payload["message"]["usage"]);
    if (type === "message_delta") this.takeUsage(payload["usage"]);
    const index = typeof payload["index"] === "number" ? payload["index"] : 0;
    if (type === "content_block_start" && !this.inputIsText) {
      const block = payload["content_block"];
      if (isRecord(block) && block["type"] === "tool_use") {
        this.calls.set(index, { id: typeof block["id"] === "string" ? block["id"] : `toolu_${index}`, name: typeof block["name"] === "string" ? block["name"] : "", arguments: "" });
      }
    }
    if (type !== "content_block_delta") return "";
    const delta = payload["delta"];
    if (!isRecord(delta)) return "";
    if (delta["type"] === "text_delta" && typeof delta["text"] === "string") return delta["text"];
    if (delta["type"] === "input_json_delta" && typeof delta["partial_json"] === "string") {
      if (this.inputIsText) return delta["partial_json"];
      const call = this.calls.get(index);
      if (call) call.arguments += delta["partial_json"];
    }
    return "";
  }

  checkEndOfBody(): void {
    throw new ProviderError(`${this.provider}: the stream ended before message_stop`, { retryable: true });
  }
}

export class AnthropicProvider extends HttpLlmProvider {
  readonly name = "anthropic";

  constructor(
    private readonly settings: AnthropicSettings,
    options: HttpProviderOptions,
  ) {
    super(options, settings.apiKey);
  }

  protected buildCall(request: LlmRequest): HttpCall {
    const { model, temperature, maxTokens, apiKey } = this.settings;
    const { system, turns } = toAnthropicPrompt(request.messages);
    return {
      url: endpoint(this.settings.baseUrl.replace(/\/v1\/?$/, ""), "/v1/messages"),
      headers: { "anthropic-version": "2023-06-01", ...(apiKey ? { "x-api-key": apiKey } : {}) },
      body: {
        model,
        max_tokens: maxTokens,
        // The project setting allows up to 2 (OpenAI's range); Anthropic rejects anything above 1.
        temperature: Math.min(temperature, 1),
        ...(system === "" ? {} : { system }),
        messages: [...turns, ...(request.toolRounds ?? []).flatMap(roundTurns)],
        stream: true,
        ...(request.tools && request.tools.length > 0 && !request.structuredOutput
          ? {
              tools: request.tools.map((tool) => ({ name: tool.name, description: tool.description, input_schema: tool.parameters })),
              ...(request.toolChoice ? { tool_choice: { type: request.toolChoice } } : {}),
            }
          : {}),
        ...(request.structuredOutput
          ? {
              tools: [
                {
                  name: request.structuredOutput.name,
                  description: request.structuredOutput.description,
                  input_schema: request.structuredOutput.schema,
                },
              ],
              tool_choice: { type: "tool", name: request.structuredOutput.name },
            }
          : {}),
      },
    };
  }

  protected deltaReader(request: LlmRequest): DeltaReader {
    return new AnthropicDeltaReader(this.name, this.secrets(), request.structuredOutput !== undefined);
  }
}
