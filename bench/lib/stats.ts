/** Latency figures from every sample of a measured window (never a subsample). */
export interface LatencySummary {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

/** Nearest-rank percentile of an ascending array. */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export function summarize(samples: ArrayLike<number>): LatencySummary {
  const sorted = Float64Array.from(samples).sort();
  let sum = 0;
  for (const value of sorted) sum += value;
  return {
    count: sorted.length,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted.length > 0 ? sorted[sorted.length - 1]! : Number.NaN,
    mean: sorted.length > 0 ? sum / sorted.length : Number.NaN,
  };
}

/** Least-squares slope of y over x. */
export function slope(points: { x: number; y: number }[]): number {
  if (points.length < 2) return Number.NaN;
  const meanX = points.reduce((sum, point) => sum + point.x, 0) / points.length;
  const meanY = points.reduce((sum, point) => sum + point.y, 0) / points.length;
  let numerator = 0;
  let denominator = 0;
  for (const { x, y } of points) {
    numerator += (x - meanX) * (y - meanY);
    denominator += (x - meanX) ** 2;
  }
  return denominator === 0 ? Number.NaN : numerator / denominator;
}

/** One measured window of a throughput test. */
export interface Window {
  completed: number;
  errors: number;
  seconds: number;
  perSecond: number;
  latencies: LatencySummary;
  samples?: number[];
  firstError?: string;
}

/** Windows taken in turns with a baseline's, as one: rates over the summed time, percentiles over all samples. */
export function merge<W extends Window>(windows: W[]): Omit<W, "samples"> {
  let completed = 0;
  let seconds = 0;
  let errors = 0;
  for (const window of windows) {
    completed += window.completed;
    seconds += window.seconds;
    errors += window.errors;
  }
  const { samples: _samples, ...first } = windows[0]!;
  const firstError = windows.find((w) => w.firstError)?.firstError;
  return {
    ...first,
    completed,
    seconds,
    errors,
    perSecond: completed / seconds,
    latencies: summarize(windows.flatMap((w) => w.samples ?? [])),
    ...(firstError ? { firstError } : {}),
  };
}

/** `count` timings of `work` run one at a time, after 100 unmeasured runs to warm it up. */
export async function sequential(count: number, work: () => Promise<unknown>): Promise<number[]> {
  return (await interleaved(count, 1, { work })).work;
}

/**
 * Latency samples (ms) of several paths measured in turns: `rounds` rounds, each taking `count / rounds` samples of
 * every path in a rotating order, so that a slow spell of the machine (a checkpoint, a neighbour) falls on all of them
 * alike rather than on whichever ran at the time.
 */
export async function interleaved<K extends string>(count: number, rounds: number, paths: Record<K, () => Promise<unknown>>): Promise<Record<K, number[]>> {
  const names = Object.keys(paths) as K[];
  for (const name of names) for (let i = 0; i < 100; i++) await paths[name]();
  const samples = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<K, number[]>;
  const perRound = Math.max(1, Math.round(count / rounds));
  for (let round = 0; round < rounds; round++) {
    for (let offset = 0; offset < names.length; offset++) {
      const name = names[(round + offset) % names.length]!;
      for (let i = 0; i < perRound; i++) {
        const began = performance.now();
        await paths[name]();
        samples[name].push(performance.now() - began);
      }
    }
  }
  return samples;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Runs `work` from `concurrency` loops until `durationMs` has passed; samples (ms) only after `warmupMs`. `total`
 * counts the runs of the warm-up too, as CPU measured over the whole loop must be divided by it.
 */
export async function closedLoop(
  options: { concurrency: number; warmupMs: number; durationMs: number },
  work: (worker: number) => Promise<void>,
): Promise<Window & { total: number }> {
  const start = performance.now();
  const measureFrom = start + options.warmupMs;
  const end = measureFrom + options.durationMs;
  const samples: number[] = [];
  let total = 0;
  let errors = 0;
  let firstError: string | undefined;
  await Promise.all(
    Array.from({ length: options.concurrency }, async (_, worker) => {
      while (performance.now() < end) {
        const began = performance.now();
        try {
          await work(worker);
          total += 1;
          if (began >= measureFrom) samples.push(performance.now() - began);
        } catch (error) {
          errors += 1;
          firstError ??= error instanceof Error ? error.message : String(error);
        }
      }
    }),
  );
  const seconds = (performance.now() - measureFrom) / 1000;
  return { completed: samples.length, total, errors, seconds, perSecond: samples.length / seconds, latencies: summarize(samples), samples, ...(firstError ? { firstError } : {}) };
}
