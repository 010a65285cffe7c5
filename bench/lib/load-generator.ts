/**
 * An HTTP/1.1 load generator in its own process: keep-alive sockets, one request in flight per socket, requests
 * written as prepared bytes and responses parsed just enough to find their end, so that the generator costs less CPU
 * than the servers it measures (node:http's client would cost more than a bare server). Closed loop by default; with
 * `ratePerSecond` requests start on a fixed schedule (the soak), each on the next free socket.
 */
import { connect, type Socket } from "node:net";
import { serveParent } from "./children.js";
import { summarize, type LatencySummary } from "./stats.js";

export interface LoadSpec {
  port: number;
  /** Raw HTTP requests; socket i sends requests[i % length] again and again. */
  requests: string[];
  connections: number;
  warmupMs: number;
  durationMs: number;
  ratePerSecond?: number;
  /** Return every latency sample too, so that several windows can be merged. */
  keepSamples?: boolean;
}

export interface LoadResult {
  completed: number;
  /** Responses of the warm-up and the measured window together (CPU figures are per request of both). */
  total: number;
  /** Responses other than 2xx, plus socket errors. */
  errors: number;
  statuses: Record<string, number>;
  seconds: number;
  perSecond: number;
  latencies: LatencySummary;
  samples?: number[];
  firstError?: string;
}

const headerEnd = Buffer.from("\r\n\r\n");

/** Where a complete response ends in `buffer`, its status, or undefined while it is incomplete. */
function parseResponse(buffer: Buffer): { end: number; status: number } | undefined {
  const head = buffer.indexOf(headerEnd);
  if (head < 0) return undefined;
  const headers = buffer.toString("latin1", 0, head).toLowerCase();
  const status = Number(headers.slice(9, 12));
  const length = /\r\ncontent-length:\s*(\d+)/.exec(headers);
  if (length) {
    const end = head + 4 + Number(length[1]);
    return buffer.length >= end ? { end, status } : undefined;
  }
  if (!/\r\ntransfer-encoding:\s*chunked/.test(headers)) return { end: head + 4, status };
  let offset = head + 4;
  for (;;) {
    const lineEnd = buffer.indexOf("\r\n", offset);
    if (lineEnd < 0) return undefined;
    const size = parseInt(buffer.toString("latin1", offset, lineEnd), 16);
    if (size === 0) {
      const trailerEnd = buffer.indexOf("\r\n", lineEnd + 2);
      return trailerEnd < 0 ? undefined : { end: trailerEnd + 2, status };
    }
    offset = lineEnd + 2 + size + 2;
    if (offset > buffer.length) return undefined;
  }
}

async function run(spec: LoadSpec): Promise<LoadResult> {
  const start = performance.now();
  const measureFrom = start + spec.warmupMs;
  const end = measureFrom + spec.durationMs;
  const samples: number[] = [];
  const statuses: Record<string, number> = {};
  let errors = 0;
  let firstError: string | undefined;
  let scheduled = 0;
  let total = 0;
  const noteError = (message: string) => {
    if (performance.now() >= measureFrom) errors += 1;
    firstError ??= message;
  };

  /** When the next request may start: now in a closed loop, else the next free slot of the schedule. */
  const nextStart = (): number => {
    if (!spec.ratePerSecond) return performance.now();
    const slot = measureFrom - spec.warmupMs + (scheduled * 1000) / spec.ratePerSecond;
    scheduled += 1;
    return slot;
  };

  const connection = (index: number) =>
    new Promise<void>((resolve) => {
      const request = Buffer.from(spec.requests[index % spec.requests.length]!);
      let socket: Socket;
      let buffer: Buffer = Buffer.alloc(0);
      let sentAt = 0;
      const send = () => {
        const at = nextStart();
        if (at >= end) {
          socket.end();
          resolve();
          return;
        }
        const wait = at - performance.now();
        const go = () => {
          sentAt = performance.now();
          socket.write(request);
        };
        if (wait > 1) setTimeout(go, wait);
        else go();
      };
      const open = () => {
        buffer = Buffer.alloc(0);
        socket = connect({ port: spec.port, host: "127.0.0.1", noDelay: true });
        socket.on("connect", send);
        socket.on("data", (chunk: Buffer) => {
          buffer = buffer.length === 0 ? chunk : Buffer.concat([buffer, chunk]);
          const response = parseResponse(buffer);
          if (!response) return;
          buffer = buffer.subarray(response.end);
          const now = performance.now();
          total += 1;
          if (sentAt >= measureFrom) {
            statuses[response.status] = (statuses[response.status] ?? 0) + 1;
            if (response.status >= 200 && response.status < 300) samples.push(now - sentAt);
            else noteError(`HTTP ${response.status}`);
          }
          send();
        });
        socket.on("error", (error) => {
          noteError(error.message);
        });
        socket.on("close", () => {
          if (performance.now() < end) setTimeout(open, 10);
          else resolve();
        });
      };
      open();
    });

  await Promise.all(Array.from({ length: spec.connections }, (_, index) => connection(index)));
  const seconds = (performance.now() - measureFrom) / 1000;
  return {
    completed: samples.length,
    total,
    errors,
    statuses,
    seconds,
    perSecond: samples.length / seconds,
    latencies: summarize(samples),
    ...(spec.keepSamples ? { samples } : {}),
    ...(firstError ? { firstError } : {}),
  };
}

serveParent({ pid: process.pid }, { run: (payload) => run(payload as LoadSpec) });
