import { endpoint, HttpLlmProvider, type DeltaReader, type HttpCall, type HttpProviderOptions } from "./http-provider.js";
import { isRecord, parseEventJson, streamedError } from "./provider-errors.js";
import type { SseEvent } from "./sse.js";
import { ProviderError, type LlmRequest, type TokenUsage, type ToolCallRequest, type ToolRound } from "./types.js";

export interface OpenAiSettings {
  /** Up to and including the version segment, e.g. `https://api.openai.com/v1` or `http://localhost:11434/v1`. */
  baseUrl: string;
  model: string;
  temperature: number;
  maxTokens: number;
  apiKey: string | undefined;
}

function firstChoice(chunk: Record<string, unknown>): Record<string, unknown> | undefined {
  const choices = chunk["choices"];
  if (!Array.isArray(choices)) return undefined;
  const first: unknown = choices[0];
  return isRecord(first) ? first : undefined;
}

/** A tool call's pieces as they stream in: the first delta of an index brings id and name, later ones more arguments. */
interface PartialToolCall {
  id: string;
  name: string;
  arguments: string;
}

function tokenCount(value: unknown): number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : 0;
}

class OpenAiDeltaReader implements DeltaReader {
  ended = false;
  usage: TokenUsage | undefined;
  private finishReasonSeen = false;
  private readonly partialCalls = new Map<number, PartialToolCall>();

  constructor(
    private readonly provider: string,
    private readonly secrets: readonly (string | undefined)[],
  ) {}

  deltaOf(event: SseEvent): string {
    const data = event.data.trim();
    if (data === "[DONE]") {
      this.ended = true;
      return "";
    }
    if (data === "") return "";
    const chunk = parseEventJson(this.provider, data);
    if (!isRecord(chunk)) return "";
    const usage = chunk["usage"];
    if (isRecord(usage)) this.usage = { inputTokens: tokenCount(usage["prompt_tokens"]), outputTokens: tokenCount(usage["completion_tokens"]) };
    if (chunk["error"] !== undefined) {
      const error = chunk["error"];
      const code = isRecord(error) ? error["code"] : undefined;
      const status = typeof code === "number" && code >= 400 && code < 600 ? code : undefined;
      throw streamedError(this.provider, chunk, status, this.secrets);
    }
    const choice = firstChoice(chunk);
    if (!choice) return "";
    if (typeof choice["finish_reason"] === "string") this.finishReasonSeen = true;
    const delta = choice["delta"];
    if (!isRecord(delta)) return "";
    if (Array.isArray(delta["tool_calls"])) this.takeToolCallDeltas(delta["tool_calls"]);
    const content = delta["content"];
    return typeof content === "string" ? content : "";
  }

  get toolCallStarted(): boolean {
    return this.partialCalls.size > 0;
  }

  toolCalls(): ToolCallRequest[] {
    return [...this.partialCalls.entries()].sort(([a], [b]) => a - b).map(([, call]) => call);
  }

  /** Servers that send each call whole (some leave out `index`) are read by the call's position in the list. */
  private takeToolCallDeltas(deltas: unknown[]): void {
    for (const [position, delta] of deltas.entries()) {
      if (!isRecord(delta)) continue;
      const index = typeof delta["index"] === "number" ? delta["index"] : position;
      const fn = isRecord(delta["function"]) ? delta["function"] : {};
      let call = this.partialCalls.get(index);
      if (!call) {
        call = { id: "", name: "", arguments: "" };
        this.partialCalls.set(index, call);
      }
      if (typeof delta["id"] === "string" && delta["id"] !== "") call.id = delta["id"];
      if (typeof fn["name"] === "string") call.name += fn["name"];
      if (typeof fn["arguments"] === "string") call.arguments += fn["arguments"];
      if (call.id === "") call.id = `call_${index}`;
    }
  }

  checkEndOfBody(): void {
    // Older llama.cpp builds close after the chunk carrying finish_reason without sending [DONE]; that is a complete answer.
    if (!this.finishReasonSeen) throw new ProviderError(`${this.provider}: the stream ended before [DONE]`, { retryable: true });
  }
}

/** A finished round as Chat Completions records it: the assistant's message with its calls, then one message per result. */
function roundMessages(round: ToolRound): Record<string, unknown>[] {
  return [
    {
      role: "assistant",
      content: round.text === "" ? null : round.text,
      tool_calls: round.calls.map((call) => ({ id: call.id, type: "function", function: { name: call.name, arguments: call.arguments } })),
    },
    ...round.results.map((result) => ({ role: "tool", tool_call_id: result.id, content: result.content })),
  ];
}

/**
 * Any server that speaks OpenAI's Chat Completions streaming protocol: OpenAI itself, vLLM, Ollama, llama.cpp's
 * server, LM Studio. Only the fields every one of them sends are relied on.
 */
export class OpenAiProvider extends HttpLlmProvider {
  readonly name = "openai";

  constructor(
    private readonly settings: OpenAiSettings,
    options: HttpProviderOptions,
  ) {
    super(options, settings.apiKey);
  }

  protected buildCall(request: LlmRequest): HttpCall {
    const { model, temperature, maxTokens, apiKey } = this.settings;
    return {
      url: endpoint(this.settings.baseUrl, "/chat/completions"),
      headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
      body: {
        // llama.cpp serves whichever model it loaded and accepts a request without one; OpenAI will say the field is missing.
        ...(model === "" ? {} : { model }),
        messages: [...request.messages.map(({ role, content }) => ({ role, content })), ...(request.toolRounds ?? []).flatMap(roundMessages)],
        temperature,
        max_tokens: maxTokens,
        stream: true,
        // Without it the usage of a streamed answer is not reported; servers that do not know the option ignore it.
        stream_options: { include_usage: true },
        ...(request.tools && request.tools.length > 0
          ? {
              tools: request.tools.map((tool) => ({ type: "function", function: { name: tool.name, description: tool.description, parameters: tool.parameters } })),
              ...(request.toolChoice ? { tool_choice: request.toolChoice } : {}),
            }
          : {}),
        ...(request.structuredOutput
          ? {
              response_format: {
                type: "json_schema",
                json_schema: {
                  name: request.structuredOutput.name,
                  description: request.structuredOutput.description,
                  schema: request.structuredOutput.schema,
                  strict: true,
                },
              },
            }
          : {}),
      },
    };
  }

  protected deltaReader(): DeltaReader {
    return new OpenAiDeltaReader(this.name, this.secrets());
  }
}
