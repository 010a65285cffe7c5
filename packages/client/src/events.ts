import type { ThreadEvent } from "./types.js";

/** The part of the WHATWG WebSocket the client uses: browsers' own, Node 22's global, or the `ws` package's. */
export interface WebSocketLike {
  readonly readyState: number;
  close(code?: number, reason?: string): void;
  addEventListener(type: "open", listener: () => void): void;
  addEventListener(type: "message", listener: (event: { data: unknown }) => void): void;
  addEventListener(type: "close", listener: (event: { code: number; reason: string }) => void): void;
  addEventListener(type: "error", listener: (event: unknown) => void): void;
}
export type WebSocketConstructor = new (url: string) => WebSocketLike;

export interface EventStreamOptions {
  /** Replay the events after this seq first. */
  after?: number;
  /** Reconnect (resuming after the last seq seen) when the connection drops; true by default. */
  reconnect?: boolean;
}

/**
 * A thread's events as an async iterator. The connection resumes after the last seen seq when it drops, so no event
 * is missed or repeated; `close()` ends the iteration.
 */
export class ThreadEventStream implements AsyncIterable<ThreadEvent> {
  private readonly queue: ThreadEvent[] = [];
  private waiting: ((result: IteratorResult<ThreadEvent>) => void) | undefined;
  private failing: ((error: Error) => void) | undefined;
  private socket: WebSocketLike | undefined;
  private lastSeq: number | undefined;
  private closed = false;
  private failure: Error | undefined;
  private retryMs = 250;
  private everOpened = false;
  private resolveOpened: () => void = () => undefined;
  /** Resolves once the first connection is open: events published from then on are delivered. */
  readonly opened: Promise<void>;

  constructor(
    private readonly url: (after: number | undefined) => Promise<string>,
    private readonly WebSocketImpl: WebSocketConstructor,
    private readonly options: EventStreamOptions,
  ) {
    this.lastSeq = options.after;
    this.opened = new Promise((resolve) => {
      this.resolveOpened = resolve;
    });
    void this.connect();
  }

  private async connect(): Promise<void> {
    let url: string;
    try {
      url = await this.url(this.lastSeq);
    } catch (error) {
      this.fail(error instanceof Error ? error : new Error(String(error)));
      return;
    }
    if (this.closed) return;
    const socket = new this.WebSocketImpl(url);
    this.socket = socket;
    let opened = false;
    socket.addEventListener("open", () => {
      opened = true;
      this.everOpened = true;
      this.retryMs = 250;
      this.resolveOpened();
    });
    socket.addEventListener("message", (event) => {
      if (typeof event.data !== "string") return;
      const parsed = JSON.parse(event.data) as ThreadEvent;
      if (parsed.type === "pong") return;
      if (this.lastSeq !== undefined && parsed.seq <= this.lastSeq) return;
      this.lastSeq = parsed.seq;
      this.push(parsed);
    });
    socket.addEventListener("error", () => undefined);
    socket.addEventListener("close", (event) => {
      if (this.closed) return;
      // The first connection's refusal (bad credential, unknown thread) is final; a later drop is retried.
      if (!opened && !this.everOpened) {
        this.fail(new Error(`events socket refused (${event.code} ${event.reason})`));
        return;
      }
      if (this.options.reconnect === false) {
        this.fail(new Error(`events socket closed (${event.code} ${event.reason})`));
        return;
      }
      setTimeout(() => void this.connect(), this.retryMs);
      this.retryMs = Math.min(this.retryMs * 2, 10_000);
    });
  }

  private push(event: ThreadEvent): void {
    const waiting = this.waiting;
    if (waiting) {
      this.waiting = undefined;
      this.failing = undefined;
      waiting({ value: event, done: false });
    } else this.queue.push(event);
  }

  private fail(error: Error): void {
    this.failure = error;
    this.closed = true;
    const failing = this.failing;
    this.waiting = undefined;
    this.failing = undefined;
    failing?.(error);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.socket?.close(1000, "closed by client");
    const waiting = this.waiting;
    this.waiting = undefined;
    this.failing = undefined;
    waiting?.({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterator<ThreadEvent> {
    return {
      next: () => {
        const queued = this.queue.shift();
        if (queued) return Promise.resolve({ value: queued, done: false });
        if (this.failure) return Promise.reject(this.failure);
        if (this.closed) return Promise.resolve({ value: undefined, done: true });
        return new Promise((resolve, reject) => {
          this.waiting = resolve;
          this.failing = reject;
        });
      },
      return: () => {
        this.close();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
