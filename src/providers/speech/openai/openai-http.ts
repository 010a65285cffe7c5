import { SpeechProviderError } from "../errors.js";

export interface OpenAiEndpoint {
  /** e.g. https://api.openai.com/v1 (no trailing slash needed). */
  baseUrl: string;
  apiKey?: string;
  model: string;
  timeoutMs?: number;
}

export function endpointUrl(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, "")}${path}`;
}

/** Sends one request to an OpenAI-compatible audio endpoint; a non-2xx answer becomes a SpeechProviderError. */
export async function callOpenAi(endpoint: OpenAiEndpoint, path: string, init: { body: FormData | string; json?: boolean }, signal?: AbortSignal): Promise<Response> {
  const headers: Record<string, string> = {};
  if (endpoint.apiKey) headers["authorization"] = `Bearer ${endpoint.apiKey}`;
  if (init.json) headers["content-type"] = "application/json";
  const timeout = AbortSignal.timeout(endpoint.timeoutMs ?? 30_000);
  let response: Response;
  try {
    response = await fetch(endpointUrl(endpoint.baseUrl, path), {
      method: "POST",
      headers,
      body: init.body,
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
  } catch (error) {
    if (signal?.aborted) throw error;
    throw new SpeechProviderError(`speech provider unreachable: ${error instanceof Error ? error.message : String(error)}`, undefined, true);
  }
  if (!response.ok) {
    const detail = (await response.text().catch(() => "")).slice(0, 300);
    throw new SpeechProviderError(`speech provider answered ${response.status}: ${detail}`, response.status, response.status === 429 || response.status >= 500);
  }
  return response;
}
