/**
 * 2. Non-streaming chats per second with the built-in agent, each connection on its own thread, against the same
 * statements issued directly (lib/chat-sql.ts) at the same concurrency: what everything around the SQL costs.
 */
import type { Benchmark } from "./lib/benchmark.js";
import { directTurn } from "./lib/chat-sql.js";
import { builtinAnswer, chatQuestion, helpDeskConfig, postgresAdminUrl, type BenchContext, type DbKind, type Timing } from "./lib/context.js";
import { rawRequest } from "./lib/http.js";
import { backendPids, cpuMeter } from "./lib/cpu.js";
import { alternate, describeCpu, loadWithCpu, mergeCpu, type CpuPerRequest } from "./lib/measure.js";
import { row, type BenchmarkResult, type Row } from "./lib/report.js";
import { openDirect, seed } from "./lib/seed.js";
import { checkBaseline } from "./lib/sql-trace.js";
import { closedLoop } from "./lib/stats.js";

const chatConcurrency = 32;

/**
 * Parley over HTTP (a server of `kind`, `connections` connections on as many threads) and the direct baseline
 * (`directTurn` loops on a freshly seeded database), measured in turns.
 */
export async function chatAgainstDirect(context: BenchContext, kind: DbKind, timing: Timing, connections: number) {
  const seeded = await seed(context, kind, connections);
  const target = await openDirect(context, seeded);
  const shape = { lease: kind === "postgres", notifyStatement: kind === "postgres" };
  const diff = await checkBaseline(seeded.appTurn, target, seeded.traceThread, shape);

  const parley = await context.parley(kind);
  const tenant = await context.tenant(parley, helpDeskConfig);
  const threads = await context.threads(parley, tenant, connections);
  const requests = threads.map((threadId) =>
    rawRequest("POST", "/chat", { authorization: tenant.apiKey }, { thread_id: threadId, message: chatQuestion, service_config_name: tenant.projectName }),
  );
  const directBackends = async () => (kind === "postgres" ? backendPids(postgresAdminUrl, seeded.location) : []);
  const measured = await alternate(
    timing,
    async (window) => {
      // The direct turns run in this process (PGlite too): its CPU, and that of the database's backends.
      const own = process.cpuUsage();
      const database = await cpuMeter(directBackends);
      const result = await closedLoop({ concurrency: connections, ...window }, (worker) => directTurn(target, seeded.threads[worker]!, shape, chatQuestion, builtinAnswer));
      const used = process.cpuUsage(own);
      // The CPU was measured over the warm-up too, so it is shared among every turn of the window.
      const turns = Math.max(1, result.total);
      const postgresSeconds = await database.stop();
      return { ...result, cpu: { serverUs: (used.user + used.system) / turns, postgresUs: (postgresSeconds * 1e6) / turns } };
    },
    (window) => loadWithCpu(context, parley, { requests, connections, keepSamples: true, ...window }),
  );
  await parley.stop();
  return {
    parley: { ...measured.b, cpu: mergeCpu(measured.bWindows) },
    direct: { ...measured.a, cpu: mergeDirectCpu(measured.aWindows) },
    diff,
    statementsPerTurn: seeded.appTurn.length,
  };
}

/** Per-turn CPU of the direct windows, weighted by their turns. */
function mergeDirectCpu(windows: { total: number; cpu: CpuPerRequest }[]): CpuPerRequest {
  const total = windows.reduce((sum, w) => sum + w.total, 0) || 1;
  return {
    serverUs: windows.reduce((sum, w) => sum + w.cpu.serverUs * w.total, 0) / total,
    postgresUs: windows.reduce((sum, w) => sum + w.cpu.postgresUs * w.total, 0) / total,
  };
}

export const chatThroughput: Benchmark = {
  name: "chat",
  byDefault: true,
  async run(context: BenchContext): Promise<BenchmarkResult> {
    const rows: Row[] = [];
    const details: Record<string, unknown> = {};
    const notes: string[] = [];
    for (const kind of context.options.dbs) {
      const { parley, direct, diff, statementsPerTurn } = await chatAgainstDirect(context, kind, context.timing, chatConcurrency);
      await context.close();
      details[kind] = { parley, direct, diff };
      notes.push(`chat [${kind}]: ${statementsPerTurn} statements per turn (BEGIN/COMMIT included); ${describeCpu(parley.cpu, kind)}; direct: this process ${direct.cpu.serverUs.toFixed(0)} µs, database ${direct.cpu.postgresUs.toFixed(0)} µs`);
      if (diff.length > 0) notes.push(`chat [${kind}]: the baseline's statements differ from Parley's: ${diff.join("; ")}`);
      if (parley.errors + direct.errors > 0) notes.push(`chat [${kind}]: errors: Parley ${parley.errors} (${parley.firstError ?? ""}), direct ${direct.errors} (${direct.firstError ?? ""})`);
      rows.push(
        row(
          { benchmark: "2 chat throughput", db: kind, name: `chats/s, builtin agent, ${chatConcurrency} threads`, figure: parley.perSecond, unit: "chats/s", baseline: direct.perSecond, baselineLabel: "same SQL direct", target: "≥ 80% of direct" },
          { on: "ratio", atLeast: 0.8 },
        ),
        row({ benchmark: "2 chat throughput", db: kind, name: "CPU per chat (server + database)", figure: parley.cpu.serverUs + parley.cpu.postgresUs, unit: "µs", baseline: direct.cpu.serverUs + direct.cpu.postgresUs, baselineLabel: "direct" }),
        row({ benchmark: "2 chat throughput", db: kind, name: "chat p99", figure: parley.latencies.p99, unit: "ms", baseline: direct.latencies.p99, baselineLabel: "direct" }),
      );
    }
    return { rows, details, notes };
  },
};
