import http, { type ClientRequest, type IncomingMessage } from "node:http";
import https from "node:https";
import { abortedError, httpStatusError } from "./provider-errors.js";
import { SseParser, type SseEvent } from "./sse.js";
import { ProviderError, type LlmOutput, type LlmProvider, type LlmRequest, type TokenUsage, type ToolCallRequest } from "./types.js";

export interface HttpProviderOptions {
  /** Budget for the whole call, the retry included. */
  timeoutMs: number;
  /** Budget for the first text delta of each attempt; half of `timeoutMs` by default so that a retry still fits. */
  firstTokenTimeoutMs?: number;
  /** Pause before the retry (default 250 ms). */
  retryDelayMs?: number;
}

/** What one attempt sends: the adapter builds it, the shared client posts it as JSON. */
export interface HttpCall {
  url: string;
  headers: Record<string, string>;
  body: unknown;
}

/** How one attempt reads a vendor's events; stateful, so each attempt gets a fresh one. */
export interface DeltaReader {
  /** The text the event carries, "" when none; throws a ProviderError for an error the vendor reported. */
  deltaOf(event: SseEvent): string;
  /** True once the vendor's end marker has arrived; whatever follows it is not read. */
  readonly ended: boolean;
  /** Throws a ProviderError unless a body that ended without the end marker still counts as a complete answer. */
  checkEndOfBody(): void;
  /** Whether a tool call has begun to arrive: progress without text, which the first-token budget counts too. */
  readonly toolCallStarted: boolean;
  /** The tool calls the response asked for, assembled from their pieces; complete once the body has ended. */
  toolCalls(): ToolCallRequest[];
  /** The tokens the response used, once the vendor has reported them. */
  readonly usage: TokenUsage | undefined;
}

/** Joins a configured base URL and an endpoint path, whether or not the admin typed a trailing slash. */
export function endpoint(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, "")}${path}`;
}

/**
 * Idle sockets are closed after this long, below the 5 s keep-alive of Node-based servers so that the client, not the
 * server, closes an idle connection; the agent also unreferences idle sockets, so they never keep the process alive.
 */
const IDLE_SOCKET_TIMEOUT_MS = 4_000;
/** How long a response may take to finish after the vendor's end marker before its connection is given up. */
const END_OF_BODY_GRACE_MS = 1_000;

const agents = {
  http: new http.Agent({ keepAlive: true, timeout: IDLE_SOCKET_TIMEOUT_MS }),
  https: new https.Agent({ keepAlive: true, timeout: IDLE_SOCKET_TIMEOUT_MS }),
};

type Stop = "first-token" | "overall" | "caller";

function networkError(provider: string, error: unknown, midStream: boolean): ProviderError {
  const code = typeof error === "object" && error !== null && "code" in error && typeof error.code === "string" ? error.code : undefined;
  const reason = code ?? (error instanceof Error ? error.message : "unknown network error");
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
 * One POST and its streamed response, with the attempt's timers and the caller's signal wired to end it. The body is
 * read in paused mode — `read()` hands over everything that has arrived, and only an empty buffer costs an await — so
 * a chunk from the socket costs one promise, not the several of a web stream or a Node stream's async iterator.
 */
class Exchange {
  /** Why the exchange was ended from outside: a budget ran out or the caller aborted. */
  stopped: Stop | undefined;
  /** Whether response headers arrived, which makes a later network failure a broken stream rather than no connection. */
  responded = false;
  private request: ClientRequest | undefined;
  private response: IncomingMessage | undefined;
  private bodyEnded = false;
  private closed = false;
  private failure: unknown;
  private wake: (() => void) | undefined;
  private readonly overallTimer: ReturnType<typeof setTimeout>;
  private firstTokenTimer: ReturnType<typeof setTimeout> | undefined;
  private readonly onCallerAbort = (): void => this.stop("caller");

  constructor(
    remainingMs: number,
    firstTokenTimeoutMs: number,
    private readonly signal: AbortSignal | undefined,
  ) {
    this.overallTimer = setTimeout(() => this.stop("overall"), remainingMs);
    this.firstTokenTimer = setTimeout(() => this.stop("first-token"), Math.min(firstTokenTimeoutMs, remainingMs));
    signal?.addEventListener("abort", this.onCallerAbort, { once: true });
  }

  /** Sends the call and resolves with the response once its headers have arrived. */
  open(url: URL, headers: Record<string, string>, body: string): Promise<IncomingMessage> {
    const secure = url.protocol === "https:";
    return new Promise((resolve, reject) => {
      const request = (secure ? https : http).request(url, {
        method: "POST",
        agent: secure ? agents.https : agents.http,
        headers: { ...headers, "content-length": String(Buffer.byteLength(body)) },
      });
      this.request = request;
      request.on("error", (error) => {
        this.fail(error);
        reject(error);
      });
      request.on("response", (response) => {
        this.responded = true;
        this.response = response;
        response.on("readable", () => this.wakeReader());
        response.on("end", () => {
          this.bodyEnded = true;
          this.wakeReader();
        });
        response.on("error", (error) => this.fail(error));
        response.on("close", () => this.fail(new Error("the response closed before its end")));
        resolve(response);
      });
      request.end(body);
    });
  }

  /** What has arrived since the last read; null when nothing has, which `hasEnded` or `readable()` then explains. */
  read(): Buffer | null {
    if (this.failure !== undefined) throw this.failure;
    return (this.response?.read() as Buffer | null | undefined) ?? null;
  }

  get hasEnded(): boolean {
    return this.bodyEnded;
  }

  /** Resolves when there is more to read or the body ended; rejects once the exchange failed. */
  readable(): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.failure !== undefined) reject(this.failure);
      else this.wake = resolve;
    });
  }

  firstTokenArrived(): void {
    if (this.firstTokenTimer === undefined) return;
    clearTimeout(this.firstTokenTimer);
    this.firstTokenTimer = undefined;
  }

  /**
   * Releases everything the attempt holds. A response read to its end marker gets a short grace to finish so that
   * its connection can go back to the pool; on every other path the connection is destroyed at once.
   */
  close(completed: boolean): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.overallTimer);
    this.firstTokenArrived();
    this.signal?.removeEventListener("abort", this.onCallerAbort);
    const { request, response } = this;
    if (!request) return;
    if (!completed || !response || this.failure !== undefined) {
      request.destroy();
      return;
    }
    if (this.bodyEnded) return;
    const giveUp = setTimeout(() => request.destroy(), END_OF_BODY_GRACE_MS).unref();
    response.removeAllListeners("readable");
    response.once("end", () => clearTimeout(giveUp));
    response.once("close", () => clearTimeout(giveUp));
    response.resume();
  }

  private stop(reason: Stop): void {
    this.stopped ??= reason;
    const error = new Error(`stopped: ${reason}`);
    this.fail(error);
    this.request?.destroy(error);
  }

  private fail(error: unknown): void {
    if (this.failure !== undefined || this.bodyEnded) return;
    this.failure = error;
    this.wakeReader();
  }

  private wakeReader(): void {
    const wake = this.wake;
    this.wake = undefined;
    wake?.();
  }
}

/**
 * The streaming client every HTTP adapter shares: POST JSON over keep-alive connections, read server-sent events,
 * enforce the first-token and overall budgets, honour the caller's abort signal, and retry once — only while nothing
 * has been yielded, because a retry after the first delta would make the caller show the start of the answer twice.
 */
export abstract class HttpLlmProvider implements LlmProvider {
  abstract readonly name: string;
  private readonly timeoutMs: number;
  private readonly firstTokenTimeoutMs: number;
  private readonly retryDelayMs: number;

  constructor(
    options: HttpProviderOptions,
    private readonly apiKey: string | undefined,
  ) {
    this.timeoutMs = options.timeoutMs;
    this.firstTokenTimeoutMs = options.firstTokenTimeoutMs ?? Math.max(1, Math.floor(options.timeoutMs / 2));
    this.retryDelayMs = options.retryDelayMs ?? 250;
  }

  protected abstract buildCall(request: LlmRequest): HttpCall;

  protected abstract deltaReader(request: LlmRequest): DeltaReader;

  /** Values that must never appear in an error message. */
  protected secrets(): (string | undefined)[] {
    return [this.apiKey];
  }

  async *stream(request: LlmRequest): AsyncGenerator<string> {
    for await (const output of this.respond(request)) if (output.type === "text") yield output.text;
  }

  async *respond(request: LlmRequest): AsyncGenerator<LlmOutput> {
    const { signal } = request;
    const deadline = Date.now() + this.timeoutMs;
    for (let attempt = 1; ; attempt++) {
      if (signal?.aborted) throw abortedError();
      const exchange = new Exchange(Math.max(0, deadline - Date.now()), this.firstTokenTimeoutMs, signal);
      let yielded = false;
      let completed = false;
      try {
        const call = this.buildCall(request);
        const headers = { "content-type": "application/json", accept: "text/event-stream", ...call.headers };
        const response = await exchange.open(this.urlOf(call), headers, JSON.stringify(call.body));
        const status = response.statusCode ?? 0;
        if (status < 200 || status > 299) throw await httpStatusError(this.name, status, response, this.secrets());
        const parser = new SseParser();
        const reader = this.deltaReader(request);
        for (let bodyEnded = false; !bodyEnded && !reader.ended; ) {
          const chunk = exchange.read();
          if (chunk === null && !exchange.hasEnded) {
            await exchange.readable();
            continue;
          }
          bodyEnded = chunk === null;
          for (const event of chunk === null ? parser.end() : parser.push(chunk)) {
            const delta = reader.deltaOf(event);
            if (reader.toolCallStarted) exchange.firstTokenArrived();
            if (delta !== "") {
              exchange.firstTokenArrived();
              yielded = true;
              yield { type: "text", text: delta };
            }
            if (reader.ended) break;
          }
        }
        if (!reader.ended) reader.checkEndOfBody();
        completed = true;
        const calls = reader.toolCalls();
        if (calls.length > 0) yield { type: "tool_calls", calls };
        if (reader.usage) yield { type: "usage", usage: reader.usage };
        return;
      } catch (error) {
        exchange.close(false);
        const failure = this.explain(error, exchange, signal);
        const remaining = deadline - Date.now();
        if (yielded || attempt > 1 || !failure.options.retryable || signal?.aborted || remaining <= 0) throw failure;
        await pause(Math.min(this.retryDelayMs, remaining), signal);
      } finally {
        exchange.close(completed);
      }
    }
  }

  private urlOf(call: HttpCall): URL {
    const url = URL.canParse(call.url) ? new URL(call.url) : undefined;
    if (url?.protocol !== "http:" && url?.protocol !== "https:") {
      throw new ProviderError(`${this.name}: the model server URL is not a valid http(s) URL`, { retryable: false });
    }
    return url;
  }

  private explain(error: unknown, exchange: Exchange, signal: AbortSignal | undefined): ProviderError {
    if (exchange.stopped === "first-token") {
      return new ProviderError(`${this.name} sent no text within ${this.firstTokenTimeoutMs} ms`, { retryable: true, timedOut: true });
    }
    if (exchange.stopped === "overall") {
      return new ProviderError(`${this.name} did not finish within ${this.timeoutMs} ms`, { retryable: false, timedOut: true });
    }
    if (signal?.aborted) return abortedError();
    if (error instanceof ProviderError) return error;
    return networkError(this.name, error, exchange.responded);
  }
}
