import { endpoint, HttpLlmProvider, type DeltaReader, type HttpCall, type HttpProviderOptions } from "./http-provider.js";
import { isRecord, parseEventJson, streamedError } from "./provider-errors.js";
import type { SseEvent } from "./sse.js";
import { ProviderError, type LlmRequest, type PromptMessage } from "./types.js";

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
  content: string;
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
    if (previous && previous.role === message.role) previous.content = `${previous.content}\n\n${message.content}`;
    else turns.push({ role: message.role, content: message.content });
  }
  if (turns[0]?.role !== "user") turns.unshift({ role: "user", content: OPENING_TURN });
  if (turns.at(-1)?.role === "assistant") turns.push({ role: "user", content: CONTINUE_TURN });
  return { system: system.join("\n\n"), turns };
}

class AnthropicDeltaReader implements DeltaReader {
  ended = false;

  constructor(
    private readonly provider: string,
    private readonly secrets: readonly (string | undefined)[],
  ) {}

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
    if (type !== "content_block_delta") return "";
    const delta = payload["delta"];
    if (!isRecord(delta)) return "";
    if (delta["type"] === "text_delta" && typeof delta["text"] === "string") return delta["text"];
    // A forced tool call (structured output) streams its input as JSON text in pieces.
    if (delta["type"] === "input_json_delta" && typeof delta["partial_json"] === "string") return delta["partial_json"];
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
        messages: turns,
        stream: true,
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

  protected deltaReader(): DeltaReader {
    return new AnthropicDeltaReader(this.name, this.secrets());
  }
}
