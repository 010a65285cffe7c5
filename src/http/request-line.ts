import { hostname } from "node:os";
import type { Logger } from "pino";

/** Where log lines are written whole (the server's turn-buffered standard output). */
export interface LineOutput {
  write(line: string): void;
}

/**
 * The one log line per request. Written to `output`, it is rendered here exactly as pino renders
 * `info({ reqId, method, route, status, ms }, "request")` with its default fields: pino's generic serializer was
 * most of a cached page read's logging. Without an output (an app given its own logger) it goes through `logger`.
 */
export class RequestLines {
  private readonly head = `,"pid":${process.pid},"hostname":${JSON.stringify(hostname())},"reqId":`;
  /** `"method":…,"route":…` by method and route: the same few strings on every request. */
  private readonly labels = new Map<string, Map<string, string>>();

  constructor(
    private readonly logger: Logger,
    private readonly output: LineOutput | undefined,
  ) {}

  write(requestId: string, method: string, route: string, status: number, ms: number): void {
    if (!this.output) {
      this.logger.info({ reqId: requestId, method, route, status, ms }, "request");
      return;
    }
    if (!this.logger.isLevelEnabled("info")) return;
    this.output.write(`{"level":30,"time":${Date.now()}${this.head}${JSON.stringify(requestId)},${this.labelsOf(method, route)},"status":${status},"ms":${ms},"msg":"request"}\n`);
  }

  private labelsOf(method: string, route: string): string {
    let byRoute = this.labels.get(method);
    if (!byRoute) {
      byRoute = new Map();
      this.labels.set(method, byRoute);
    }
    let labels = byRoute.get(route);
    if (labels === undefined) {
      labels = `"method":${JSON.stringify(method)},"route":${JSON.stringify(route)}`;
      byRoute.set(route, labels);
    }
    return labels;
  }
}
