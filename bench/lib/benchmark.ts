import type { BenchContext } from "./context.js";
import type { BenchmarkResult } from "./report.js";

export interface Benchmark {
  /** What `--only` selects. */
  name: string;
  /** Part of a run without `--only`. */
  byDefault: boolean;
  run(context: BenchContext): Promise<BenchmarkResult>;
}
