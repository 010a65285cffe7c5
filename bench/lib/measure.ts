import type { BenchContext, Parley, Timing } from "./context.js";
import type { LoadResult, LoadSpec } from "./load-generator.js";
import { merge, type Window } from "./stats.js";

export interface CpuPerRequest {
  /** Microseconds of CPU per request (warm-up included) in the Parley process and in its PostgreSQL backends. */
  serverUs: number;
  postgresUs: number;
}

/** A load against `parley`, with the CPU its process and its database backends spent per request. */
export async function loadWithCpu(context: BenchContext, parley: Parley, spec: Omit<LoadSpec, "port">): Promise<LoadResult & { cpu: CpuPerRequest }> {
  const meter = await parley.cpu();
  const result = await context.load({ ...spec, port: parley.port });
  const used = await meter.stop();
  const requests = Math.max(1, result.total);
  return { ...result, cpu: { serverUs: (used.server * 1e6) / requests, postgresUs: (used.postgres * 1e6) / requests } };
}

export function describeCpu(cpu: CpuPerRequest, kind: string): string {
  return kind === "postgres"
    ? `CPU per request: Parley ${cpu.serverUs.toFixed(0)} µs, PostgreSQL ${cpu.postgresUs.toFixed(0)} µs`
    : `CPU per request: Parley with embedded PGlite ${cpu.serverUs.toFixed(0)} µs`;
}

/** Per-request CPU over several windows, weighted by their request counts. */
export function mergeCpu(windows: (LoadResult & { cpu: CpuPerRequest })[]): CpuPerRequest {
  const total = windows.reduce((sum, w) => sum + w.total, 0) || 1;
  return {
    serverUs: windows.reduce((sum, w) => sum + w.cpu.serverUs * w.total, 0) / total,
    postgresUs: windows.reduce((sum, w) => sum + w.cpu.postgresUs * w.total, 0) / total,
  };
}

/**
 * Measures two sides in turns, `rounds` windows each (the first with the full warm-up, later ones with a short one),
 * so that load from elsewhere on the machine falls on both alike; returns each side's windows and their merge.
 */
export async function alternate<A extends Window, B extends Window>(
  timing: Timing,
  first: (window: { warmupMs: number; durationMs: number }) => Promise<A>,
  second: (window: { warmupMs: number; durationMs: number }) => Promise<B>,
): Promise<{ a: Omit<A, "samples">; b: Omit<B, "samples">; aWindows: A[]; bWindows: B[] }> {
  const aWindows: A[] = [];
  const bWindows: B[] = [];
  for (let round = 0; round < timing.rounds; round++) {
    const window = { warmupMs: round === 0 ? timing.warmupMs : 1000, durationMs: timing.durationMs / timing.rounds };
    aWindows.push(await first(window));
    bWindows.push(await second(window));
  }
  return { a: merge(aWindows), b: merge(bWindows), aWindows, bWindows };
}
