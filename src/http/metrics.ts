const bucketBounds = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

interface Series {
  count: number;
  sum: number;
  buckets: number[];
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

/** Request counts and latencies by route, rendered in the Prometheus text format. */
export class HttpMetrics {
  private readonly requests = new Map<string, number>();
  private readonly durations = new Map<string, Series>();
  private readonly gauges = new Map<string, () => number>();

  observe(method: string, route: string, status: number, seconds: number): void {
    const labels = `method="${escapeLabel(method)}",route="${escapeLabel(route)}"`;
    const countKey = `${labels},status="${status}"`;
    this.requests.set(countKey, (this.requests.get(countKey) ?? 0) + 1);
    let series = this.durations.get(labels);
    if (!series) {
      series = { count: 0, sum: 0, buckets: bucketBounds.map(() => 0) };
      this.durations.set(labels, series);
    }
    series.count += 1;
    series.sum += seconds;
    bucketBounds.forEach((bound, index) => {
      if (seconds <= bound) series.buckets[index]! += 1;
    });
  }

  gauge(name: string, read: () => number): void {
    this.gauges.set(name, read);
  }

  render(): string {
    const lines = ["# HELP parley_http_requests_total HTTP requests by method, route and status.", "# TYPE parley_http_requests_total counter"];
    for (const [labels, count] of this.requests) lines.push(`parley_http_requests_total{${labels}} ${count}`);
    lines.push("# HELP parley_http_request_duration_seconds HTTP request latency by method and route.");
    lines.push("# TYPE parley_http_request_duration_seconds histogram");
    for (const [labels, series] of this.durations) {
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
