import { endpoint, HttpLlmProvider, type DeltaReader, type HttpCall, type HttpProviderOptions } from "./http-provider.js";
import { isRecord, parseEventJson, streamedError } from "./provider-errors.js";
import type { SseEvent } from "./sse.js";
import { ProviderError, type LlmRequest } from "./types.js";

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

class OpenAiDeltaReader implements DeltaReader {
  ended = false;
  private finishReasonSeen = false;

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
    const content = isRecord(delta) ? delta["content"] : undefined;
    return typeof content === "string" ? content : "";
  }

  checkEndOfBody(): void {
    // Older llama.cpp builds close after the chunk carrying finish_reason without sending [DONE]; that is a complete answer.
    if (!this.finishReasonSeen) throw new ProviderError(`${this.provider}: the stream ended before [DONE]`, { retryable: true });
  }
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
        messages: request.messages.map(({ role, content }) => ({ role, content })),
        temperature,
        max_tokens: maxTokens,
        stream: true,
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
