import { endpoint, HttpLlmProvider, type HttpCall, type HttpProviderOptions } from "./http-provider.js";
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
      },
    };
  }

  protected async *readDeltas(events: AsyncIterable<SseEvent>): AsyncGenerator<string> {
    let finished = false;
    for await (const event of events) {
      const data = event.data.trim();
      if (data === "[DONE]") return;
      if (data === "") continue;
      const chunk = parseEventJson(this.name, data);
      if (!isRecord(chunk)) continue;
      if (chunk["error"] !== undefined) {
        const error = chunk["error"];
        const code = isRecord(error) ? error["code"] : undefined;
        const status = typeof code === "number" && code >= 400 && code < 600 ? code : undefined;
        throw streamedError(this.name, chunk, status, this.secrets());
      }
      const choice = firstChoice(chunk);
      if (!choice) continue;
      const delta = choice["delta"];
      const content = isRecord(delta) ? delta["content"] : undefined;
      if (typeof content === "string" && content !== "") yield content;
      if (typeof choice["finish_reason"] === "string") finished = true;
    }
    // Older llama.cpp builds close after the chunk carrying finish_reason without sending [DONE]; that is a complete answer.
    if (!finished) throw new ProviderError(`${this.name}: the stream ended before [DONE]`, { retryable: true });
  }
}
