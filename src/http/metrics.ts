import { Gauge, Registry, collectDefaultMetrics } from "prom-client";

const durationBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** One route's requests: counts by status, and the latency histogram's counts by bucket (the last is +Inf). */
interface RouteRecord {
  labels: { method: string; route: string };
  byStatus: Map<number, number>;
  buckets: number[];
  sum: number;
  count: number;
}

/** A value as prom-client's registry renders it: `labels` first, then `sharedLabels`. */
interface ExportedValue {
  labels: Record<string, string | number>;
  sharedLabels: Record<string, string>;
  value: number;
  metricName?: string;
}

/**
 * Request counts and latencies by route, gauges read at scrape time and the process's own metrics, by prom-client
 * in a registry of this server's own (several servers may share a process, as in tests). The request metrics are
 * counted here and handed to the registry as prom-client's own counter and histogram would render them: their
 * observe hashed the label set on every request, the largest part of a cached read's metrics.
 */
export class HttpMetrics {
  private readonly registry = new Registry();
  /** By method, then route: both are the same few strings on every request, whose hashes V8 keeps. */
  private readonly routes = new Map<string, Map<string, RouteRecord>>();

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: "parley_" });
    const records = () => [...this.routes.values()].flatMap((byRoute) => [...byRoute.values()]);
    this.register("parley_http_requests_total", "HTTP requests by method, route and status.", "counter", () =>
      records().flatMap((record) =>
        [...record.byStatus].map(([status, count]) => ({ labels: { ...record.labels, status: String(status) }, sharedLabels: {}, value: count })),
      ),
    );
    const name = "parley_http_request_duration_seconds";
    this.register(name, "HTTP request latency by method and route.", "histogram", () =>
      records().flatMap((record) => {
        let cumulative = 0;
        const values: ExportedValue[] = durationBuckets.map((le, index) => {
          cumulative += record.buckets[index]!;
          return { labels: { le }, sharedLabels: record.labels, value: cumulative, metricName: `${name}_bucket` };
        });
        values.push(
          { labels: { le: "+Inf" }, sharedLabels: record.labels, value: record.count, metricName: `${name}_bucket` },
          { labels: {}, sharedLabels: record.labels, value: record.sum, metricName: `${name}_sum` },
          { labels: {}, sharedLabels: record.labels, value: record.count, metricName: `${name}_count` },
        );
        return values;
      }),
    );
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  observe(method: string, route: string, status: number, seconds: number): void {
    let byRoute = this.routes.get(method);
    if (!byRoute) {
      byRoute = new Map();
      this.routes.set(method, byRoute);
    }
    let record = byRoute.get(route);
    if (!record) {
      record = { labels: { method, route }, byStatus: new Map(), buckets: durationBuckets.map(() => 0), sum: 0, count: 0 };
      byRoute.set(route, record);
    }
    record.byStatus.set(status, (record.byStatus.get(status) ?? 0) + 1);
    let bucket = 0;
    while (bucket < durationBuckets.length && seconds > durationBuckets[bucket]!) bucket += 1;
    if (bucket < durationBuckets.length) record.buckets[bucket]! += 1;
    record.sum += seconds;
    record.count += 1;
  }

  /** A metric of values computed at scrape time, in the shape the registry renders. */
  private register(name: string, help: string, type: "counter" | "histogram", values: () => ExportedValue[]): void {
    const read = async () => ({ name, help, type, values: values(), aggregator: "sum" as const });
    // getForPromString is what the text rendering reads; get (labels merged) what the JSON view reads.
    this.registry.registerMetric({
      name,
      help,
      type,
      getForPromString: read,
      get: async () => {
        const metric = await read();
        return { ...metric, values: metric.values.map(({ labels, sharedLabels, ...rest }) => ({ ...rest, labels: { ...labels, ...sharedLabels } })) };
      },
    } as unknown as Parameters<Registry["registerMetric"]>[0]);
  }

  /** A counter by one label, its values (by the label's value) read when the metrics are scraped. */
  counter(name: string, help: string, label: string, read: () => Record<string, number>): void {
    this.register(name, help, "counter", () => Object.entries(read()).map(([value, count]) => ({ labels: { [label]: value }, sharedLabels: {}, value: count })));
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
