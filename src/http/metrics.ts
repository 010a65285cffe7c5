const bucketBounds = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

interface Series {
  /** `method="…",route="…"`, escaped once. */
  labels: string;
  count: number;
  sum: number;
  buckets: number[];
  byStatus: Map<number, number>;
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

/** Request counts and latencies by route, rendered in the Prometheus text format. */
export class HttpMetrics {
  /** By method, then route pattern: observing a request builds no label string. */
  private readonly series = new Map<string, Map<string, Series>>();
  private readonly gauges = new Map<string, () => number>();

  observe(method: string, route: string, status: number, seconds: number): void {
    let routes = this.series.get(method);
    if (!routes) {
      routes = new Map();
      this.series.set(method, routes);
    }
    let series = routes.get(route);
    if (!series) {
      series = { labels: `method="${escapeLabel(method)}",route="${escapeLabel(route)}"`, count: 0, sum: 0, buckets: bucketBounds.map(() => 0), byStatus: new Map() };
      routes.set(route, series);
    }
    series.byStatus.set(status, (series.byStatus.get(status) ?? 0) + 1);
    series.count += 1;
    series.sum += seconds;
    for (let index = 0; index < bucketBounds.length; index++) if (seconds <= bucketBounds[index]!) series.buckets[index]! += 1;
  }

  gauge(name: string, read: () => number): void {
    this.gauges.set(name, read);
  }

  render(): string {
    const lines = ["# HELP parley_http_requests_total HTTP requests by method, route and status.", "# TYPE parley_http_requests_total counter"];
    const all = [...this.series.values()].flatMap((routes) => [...routes.values()]);
    for (const series of all) {
      for (const [status, count] of series.byStatus) lines.push(`parley_http_requests_total{${series.labels},status="${status}"} ${count}`);
    }
    lines.push("# HELP parley_http_request_duration_seconds HTTP request latency by method and route.");
    lines.push("# TYPE parley_http_request_duration_seconds histogram");
    for (const { labels, ...series } of all) {
      bucketBounds.forEach((bound, index) => {
        lines.push(`parley_http_request_duration_seconds_bucket{${labels},le="${bound}"} ${series.buckets[index]}`);
      });
      lines.push(`parley_http_request_duration_seconds_bucket{${labels},le="+Inf"} ${series.count}`);
      lines.push(`parley_http_request_duration_seconds_sum{${labels}} ${series.sum}`);
      lines.push(`parley_http_request_duration_seconds_count{${labels}} ${series.count}`);
    }
    for (const [name, read] of this.gauges) {
      lines.push(`# TYPE ${name} gauge`, `${name} ${read()}`);
    }
    const memory = process.memoryUsage();
    lines.push("# TYPE parley_process_resident_memory_bytes gauge", `parley_process_resident_memory_bytes ${memory.rss}`);
    lines.push("# TYPE parley_process_heap_used_bytes gauge", `parley_process_heap_used_bytes ${memory.heapUsed}`);
    return lines.join("\n") + "\n";
  }
}
