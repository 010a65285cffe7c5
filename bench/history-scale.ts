/**
 * 4. History and search at scale: the same page request on a thread of 1,000 messages and on one of 1,000,000
 * (100,000 on PGlite; 20,000 with --quick), one request at a time, the two threads interleaved; and a selective search
 * (a word in 0.01% of the messages) on the big thread.
 */
import { encodeCursor } from "../src/domain/shared/cursors.js";
import type { Benchmark } from "./lib/benchmark.js";
import { fillThread, rareEvery, rareWord } from "./lib/bulk.js";
import { helpDeskConfig, type BenchContext, type DbKind } from "./lib/context.js";
import { timedGet } from "./lib/http.js";
import { row, type BenchmarkResult, type Row } from "./lib/report.js";
import { summarize } from "./lib/stats.js";

const small = 1000;

function bigSize(kind: DbKind, quick: boolean): number {
  if (quick) return 20_000;
  return kind === "postgres" ? 1_000_000 : 100_000;
}

export const historyScale: Benchmark = {
  name: "history",
  byDefault: true,
  async run(context: BenchContext): Promise<BenchmarkResult> {
    const rows: Row[] = [];
    const details: Record<string, unknown> = {};
    const notes: string[] = [];
    const samples = context.timing.samples;
    for (const kind of context.options.dbs) {
      const big = bigSize(kind, context.options.quick);
      const parley = await context.parley(kind);
      const tenant = await context.tenant(parley, helpDeskConfig);
      const [smallThread, bigThread] = await context.threads(parley, tenant, 2);
      const loadStarted = performance.now();
      const run = (sql: string, params?: unknown[]) => parley.sql(sql, params);
      await fillThread(run, smallThread!, tenant.projectId, small);
      await fillThread(run, bigThread!, tenant.projectId, big);
      const loadSeconds = (performance.now() - loadStarted) / 1000;
      notes.push(`history [${kind}]: loaded ${small.toLocaleString("en-US")} + ${big.toLocaleString("en-US")} messages in ${loadSeconds.toFixed(0)} s` +
        (big < 1_000_000 ? ` (${big.toLocaleString("en-US")} rather than 1,000,000: ${context.options.quick ? "--quick" : "PGlite loads about ten times slower"})` : ""));

      const headers = { authorization: tenant.apiKey };
      const page = (threadId: string, query = "") => timedGet(parley.port, `/threads/${threadId}/messages${query}`, headers);
      const middle = `?cursor=${encodeCursor("history", bigThread!, Math.floor(big / 2))}`;
      const search = () => timedGet(parley.port, `/threads/${bigThread}/messages/search?query=${rareWord}`, headers);
      const first = JSON.parse((await search()).text) as { matches: unknown[] };
      const expected = Math.min(10, big / rareEvery);
      if (first.matches.length !== expected) throw new Error(`expected ${expected} search matches, got ${first.matches.length}`);
      for (let i = 0; i < 50; i++) {
        await page(smallThread!);
        await page(bigThread!);
        await page(bigThread!, middle);
      }
      for (let i = 0; i < 3; i++) await search();
      const smallPage: number[] = [];
      const bigPage: number[] = [];
      const bigMiddle: number[] = [];
      const searches: number[] = [];
      // Pages interleaved so that both threads see the same machine; searches apart, as they cost far more.
      for (let i = 0; i < samples; i++) {
        smallPage.push((await page(smallThread!)).ms);
        bigPage.push((await page(bigThread!)).ms);
        bigMiddle.push((await page(bigThread!, middle)).ms);
      }
      const searchUntil = performance.now() + context.timing.durationMs * 2;
      while (searches.length < samples / 4 && (searches.length < 5 || performance.now() < searchUntil)) searches.push((await search()).ms);
      await parley.stop();
      const figures = { smallPage: summarize(smallPage), bigPage: summarize(bigPage), bigMiddle: summarize(bigMiddle), search: summarize(searches), big, loadSeconds };
      details[kind] = figures;
      const size = big >= 1_000_000 ? "1M" : `${big / 1000}k`;
      const targets = kind === "postgres";
      rows.push(
        row(
          { benchmark: "4 history at scale", db: kind, name: `latest page p50, ${size} vs 1k messages`, figure: figures.bigPage.p50, unit: "ms", baseline: figures.smallPage.p50, baselineLabel: "1k thread", ...(targets ? { target: "ratio ≤ 1.2" } : {}) },
          targets ? { on: "ratio", atMost: 1.2 } : undefined,
        ),
        row({ benchmark: "4 history at scale", db: kind, name: `latest page p50 at ${size}`, figure: figures.bigPage.p50, unit: "ms", ...(targets ? { target: "≤ 5 ms" } : {}) }, targets ? { on: "figure", atMost: 5 } : undefined),
        row({ benchmark: "4 history at scale", db: kind, name: `middle page (cursor) p50 at ${size}`, figure: figures.bigMiddle.p50, unit: "ms", baseline: figures.smallPage.p50, baselineLabel: "1k latest" }),
        row({ benchmark: "4 history at scale", db: kind, name: `search "${rareWord}" p50 at ${size}`, figure: figures.search.p50, unit: "ms", ...(targets ? { target: "≤ 20 ms" } : {}) }, targets ? { on: "figure", atMost: 20 } : undefined),
        row({ benchmark: "4 history at scale", db: kind, name: `search p99 at ${size}`, figure: figures.search.p99, unit: "ms" }),
      );
    }
    return { rows, details, notes };
  },
};
