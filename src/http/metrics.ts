import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";

type RequestCounter = ReturnType<Counter<"method" | "route" | "status">["labels"]>;
type RequestTimer = ReturnType<Histogram<"method" | "route">["labels"]>;

/**
 * Request counts and latencies by route, gauges read at scrape time and the process's own metrics, by prom-client
 * in a registry of this server's own (several servers may share a process, as in tests).
 */
export class HttpMetrics {
  private readonly registry = new Registry();
  private readonly requests = new Counter({
    name: "parley_http_requests_total",
    help: "HTTP requests by method, route and status.",
    labelNames: ["method", "route", "status"] as const,
    registers: [this.registry],
  });
  private readonly durations = new Histogram({
    name: "parley_http_request_duration_seconds",
    help: "HTTP request latency by method and route.",
    labelNames: ["method", "route"] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });
  /** Label children by method, route (and status): observing a request looks up no label set. */
  private readonly counters = new Map<string, RequestCounter>();
  private readonly timers = new Map<string, RequestTimer>();

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: "parley_" });
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  observe(method: string, route: string, status: number, seconds: number): void {
    const routeKey = `${method} ${route}`;
    const countKey = `${routeKey} ${status}`;
    let counter = this.counters.get(countKey);
    if (!counter) {
      counter = this.requests.labels(method, route, String(status));
      this.counters.set(countKey, counter);
    }
    let timer = this.timers.get(routeKey);
    if (!timer) {
      timer = this.durations.labels(method, route);
      this.timers.set(routeKey, timer);
    }
    counter.inc();
    timer.observe(seconds);
  }

  /** A gauge whose value is read when the metrics are scraped. */
  gauge(name: string, help: string, read: () => number): void {
    new Gauge({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.set(read());
      },
    });
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }
}
