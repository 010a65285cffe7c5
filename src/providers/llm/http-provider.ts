import { abortedError, httpStatusError } from "./provider-errors.js";
import { bodyChunks, parseSse, type SseEvent } from "./sse.js";
import { ProviderError, type LlmProvider, type LlmRequest } from "./types.js";

export interface HttpProviderOptions {
  /** Budget for the whole call, the retry included. */
  timeoutMs: number;
  /** Budget for the first text delta of each attempt; half of `timeoutMs` by default so that a retry still fits. */
  firstTokenTimeoutMs?: number;
  /** Pause before the retry (default 250 ms). */
  retryDelayMs?: number;
  fetchImpl?: typeof fetch;
}

/** What one attempt sends: the adapter builds it, the shared client posts it as JSON. */
export interface HttpCall {
  url: string;
  headers: Record<string, string>;
  body: unknown;
}

/** Joins a configured base URL and an endpoint path, whether or not the admin typed a trailing slash. */
export function endpoint(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, "")}${path}`;
}

/** undici reports network failures as `TypeError: fetch failed` / `terminated` with the real reason in `cause`. */
function networkError(provider: string, error: unknown, midStream: boolean): ProviderError {
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  const code = typeof cause === "object" && cause !== null && "code" in cause && typeof cause.code === "string" ? cause.code : undefined;
  const reason = code ?? (cause instanceof Error ? cause.message : "unknown network error");
  const what = midStream ? "the connection to the model server broke mid-stream" : "could not reach the model server";
  return new ProviderError(`${provider}: ${what} (${reason})`, { retryable: true });
}

function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(abortedError());
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * The streaming client every HTTP adapter shares: POST JSON, read server-sent events, enforce the first-token and
 * overall budgets, honour the caller's abort signal, and retry once — only while nothing has been yielded, because a
 * retry after the first delta would make the caller show the start of the answer twice.
 */
export abstract class HttpLlmProvider implements LlmProvider {
  abstract readonly name: string;
  private readonly timeoutMs: number;
  private readonly firstTokenTimeoutMs: number;
  private readonly retryDelayMs: number;
  private readonly fetchImpl: typeof fetch;

  constructor(
    options: HttpProviderOptions,
    private readonly apiKey: string | undefined,
  ) {
    this.timeoutMs = options.timeoutMs;
    this.firstTokenTimeoutMs = options.firstTokenTimeoutMs ?? Math.max(1, Math.floor(options.timeoutMs / 2));
    this.retryDelayMs = options.retryDelayMs ?? 250;
    this.fetchImpl = options.fetchImpl ?? fetch;
  }

  protected abstract buildCall(request: LlmRequest): HttpCall;

  /** Turns the vendor's events into text deltas; throws a ProviderError when the body ends before the vendor's end marker. */
  protected abstract readDeltas(events: AsyncIterable<SseEvent>): AsyncIterable<string>;

  /** Values that must never appear in an error message. */
  protected secrets(): (string | undefined)[] {
    return [this.apiKey];
  }

  async *stream(request: LlmRequest): AsyncGenerator<string> {
    const deadline = Date.now() + this.timeoutMs;
    for (let attempt = 1; ; attempt++) {
      let yielded = false;
      try {
        for await (const delta of this.attempt(request, deadline)) {
          yielded = true;
          yield delta;
        }
        return;
      } catch (error) {
        const failure = error instanceof ProviderError ? error : new ProviderError(`${this.name}: ${String(error)}`, { retryable: false });
        const remaining = deadline - Date.now();
        if (yielded || attempt > 1 || !failure.options.retryable || request.signal?.aborted || remaining <= 0) throw failure;
        await pause(Math.min(this.retryDelayMs, remaining), request.signal);
      }
    }
  }

  private async *attempt(request: LlmRequest, deadline: number): AsyncGenerator<string> {
    const { signal } = request;
    if (signal?.aborted) throw abortedError();
    const controller = new AbortController();
    let timedOut: "first-token" | "overall" | undefined;
    const remaining = Math.max(0, deadline - Date.now());
    const expire = (which: "first-token" | "overall"): void => {
      timedOut ??= which;
      controller.abort();
    };
    const overallTimer = setTimeout(() => expire("overall"), remaining);
    let firstTokenTimer: ReturnType<typeof setTimeout> | undefined = setTimeout(
      () => expire("first-token"),
      Math.min(this.firstTokenTimeoutMs, remaining),
    );
    const onAbort = (): void => controller.abort();
    signal?.addEventListener("abort", onAbort, { once: true });
    let responded = false;
    try {
      const call = this.buildCall(request);
      const response = await this.fetchImpl(call.url, {
        method: "POST",
        headers: { "content-type": "application/json", accept: "text/event-stream", ...call.headers },
        body: JSON.stringify(call.body),
        signal: controller.signal,
      });
      responded = true;
      if (!response.ok) throw await httpStatusError(this.name, response, this.secrets());
      if (!response.body) throw new ProviderError(`${this.name} returned an empty body`, { retryable: true });
      for await (const delta of this.readDeltas(parseSse(bodyChunks(response.body)))) {
        if (delta === "") continue;
        clearTimeout(firstTokenTimer);
        firstTokenTimer = undefined;
        yield delta;
      }
    } catch (error) {
      if (timedOut === "first-token") {
        throw new ProviderError(`${this.name} sent no text within ${this.firstTokenTimeoutMs} ms`, { retryable: true, timedOut: true });
      }
      if (timedOut === "overall") {
        throw new ProviderError(`${this.name} did not finish within ${this.timeoutMs} ms`, { retryable: false, timedOut: true });
      }
      if (signal?.aborted) throw abortedError();
      if (error instanceof ProviderError) throw error;
      throw networkError(this.name, error, responded);
    } finally {
      clearTimeout(overallTimer);
      clearTimeout(firstTokenTimer);
      signal?.removeEventListener("abort", onAbort);
      controller.abort();
    }
  }
}
