/**
 * What a benchmark needs, started on demand and stopped afterwards: Parley servers (each on a fresh PostgreSQL
 * database or PGlite folder), the bare HTTP baseline, fake providers and the load generator, every one its own process.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pg from "pg";
import type { FakeBehaviour } from "../../test/support/fake-llm-servers.js";
import { benchFile, startChild, type Child } from "./children.js";
import { backendPids, cpuMeter } from "./cpu.js";
import { api } from "./http.js";
import type { LoadResult, LoadSpec } from "./load-generator.js";
import type { ParleyServerInfo } from "./parley-server.js";
import { startScriptNodeFlags } from "./start-script.js";

export type DbKind = "postgres" | "pglite";

export interface Timing {
  warmupMs: number;
  durationMs: number;
  /** Sequential latency samples per measured path. */
  samples: number;
  /** Windows a throughput and its baseline are measured in, taking turns. */
  rounds: number;
}

export interface RunOptions {
  quick: boolean;
  dbs: DbKind[];
  minutes: number;
}

export const adminKey = "bench-admin-key-0123456789abcdef";
const secrets = { JWT_SECRET: "bench-jwt-secret-0123456789abcdef0123", ENCRYPTION_KEY: "bench-encryption-key-0123456789abcdef" };
/** BENCH_PROFILE_DIR=dir writes a CPU profile of every Parley server (open it in Chrome's DevTools). */
const profileDir = process.env.BENCH_PROFILE_DIR;
export const postgresAdminUrl = process.env.BENCH_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

export interface Parley {
  port: number;
  pid: number;
  base: string;
  sql<Row = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<Row[]>;
  /** The server's memory; with `collect`, after a full garbage collection. */
  memory(collect?: boolean): Promise<NodeJS.MemoryUsage>;
  /** CPU seconds of the server process and of its PostgreSQL backends (0 on PGlite) from now until `stop()`. */
  cpu(): Promise<{ stop(): Promise<{ server: number; postgres: number }> }>;
  /** Any other request the server process answers (bench/lib/parley-server.ts). */
  call<T>(type: string, payload?: unknown): Promise<T>;
  stop(): Promise<void>;
}

export interface Tenant {
  organizationId: string;
  apiKey: string;
  projectId: string;
  projectName: string;
}

async function withAdmin<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: postgresAdminUrl });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

export class BenchContext {
  private readonly cleanups: (() => Promise<void>)[] = [];
  private databases = 0;
  private readonly runId = `${Date.now().toString(36)}_${process.pid}`;

  constructor(readonly options: RunOptions) {}

  get timing(): Timing {
    return this.options.quick
      ? { warmupMs: 1000, durationMs: 2000, samples: 100, rounds: 1 }
      : { warmupMs: 3000, durationMs: 12_000, samples: 2000, rounds: 3 };
  }

  /** Registers a cleanup that runs at `close` (latest first) unless it ran before. */
  defer(cleanup: () => Promise<void>): () => Promise<void> {
    let done = false;
    const once = async () => {
      if (done) return;
      done = true;
      await cleanup();
    };
    this.cleanups.push(once);
    return once;
  }

  async close(): Promise<void> {
    for (const cleanup of this.cleanups.splice(0).reverse()) {
      await cleanup().catch((error: unknown) => process.stderr.write(`cleanup failed: ${String(error)}\n`));
    }
  }

  /** A new, empty PostgreSQL database `parley_bench_*`, dropped at close. */
  async postgresDatabase(): Promise<{ url: string; drop(): Promise<void> }> {
    this.databases += 1;
    const name = `parley_bench_${this.runId}_${this.databases}`;
    await withAdmin((client) => client.query(`CREATE DATABASE ${name}`));
    const drop = this.defer(() => withAdmin(async (client) => void (await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))));
    const url = new URL(postgresAdminUrl);
    url.pathname = `/${name}`;
    return { url: url.toString(), drop };
  }

  async tempDir(): Promise<string> {
    const dir = await mkdtemp(path.join(tmpdir(), "parley-bench-"));
    this.defer(() => rm(dir, { recursive: true, force: true }));
    return dir;
  }

  /**
   * A Parley server on a fresh database of `kind`, configured as in production apart from the admin key; Node flags in
   * `extraNodeFlags` come after the start script's (V8 takes the last of a repeated flag).
   */
  async parley(kind: DbKind, env: Record<string, string> = {}, extraNodeFlags: string[] = []): Promise<Parley> {
    const dataDir = await this.tempDir();
    const database = kind === "postgres" ? await this.postgresDatabase() : undefined;
    const child = await startChild<ParleyServerInfo>(benchFile("lib/parley-server.ts"), {
      ADMIN_API_KEY: adminKey,
      DATA_DIR: dataDir,
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? "info",
      ...(database ? { DATABASE_URL: database.url, ...secrets } : {}),
      ...env,
    }, [...startScriptNodeFlags(), "--expose-gc", ...extraNodeFlags, ...(profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : [])]);
    const stop = this.defer(async () => {
      await child.stop();
      await database?.drop();
    });
    return {
      port: child.info.port,
      pid: child.info.pid,
      base: `http://127.0.0.1:${child.info.port}`,
      sql: (sql, params) => child.call("sql", { sql, params }),
      memory: (collect = false) => child.call("memory", { gc: collect }),
      call: (type, payload) => child.call(type, payload),
      async cpu() {
        const server = await cpuMeter(async () => [child.info.pid]);
        const postgres = await cpuMeter(async () => (database ? backendPids(postgresAdminUrl, database.url) : []));
        return { stop: async () => ({ server: await server.stop(), postgres: await postgres.stop() }) };
      },
      stop,
    };
  }

  async bareServer(body: string): Promise<{ port: number; pid: number; stop(): Promise<void> }> {
    const child = await startChild<{ port: number }>(benchFile("lib/bare-server.ts"));
    await child.call("body", body);
    return { port: child.info.port, pid: child.pid, stop: this.defer(() => child.stop()) };
  }

  async fakeProvider(behaviour: FakeBehaviour): Promise<{ url: string; port: number; pid: number; stop(): Promise<void> }> {
    const child = await startChild<{ url: string }>(benchFile("lib/fake-provider.ts"), { FAKE_BEHAVIOUR: JSON.stringify(behaviour) });
    return { url: child.info.url, port: Number(new URL(child.info.url).port), pid: child.pid, stop: this.defer(() => child.stop()) };
  }

  /** Runs one load in a fresh generator process. */
  async load(spec: LoadSpec): Promise<LoadResult> {
    const child: Child<unknown> = await startChild(benchFile("lib/load-generator.ts"));
    try {
      return await child.call<LoadResult>("run", spec, spec.warmupMs + spec.durationMs + 120_000);
    } finally {
      await child.stop();
    }
  }

  /** An organization with one project (named "bench") configured with `config`. */
  async tenant(parley: Parley, config: unknown): Promise<Tenant> {
    const admin = `Bearer ${adminKey}`;
    const org = await api<{ id: string; api_key: string }>(parley.base, "POST", "/admin/organizations", admin, { name: "Bench" });
    const project = await api<{ id: string }>(parley.base, "POST", `/admin/organizations/${org.id}/projects`, admin, { name: "bench", config });
    return { organizationId: org.id, apiKey: org.api_key, projectId: project.id, projectName: "bench" };
  }

  async threads(parley: Parley, tenant: Tenant, count: number): Promise<string[]> {
    const ids: string[] = [];
    for (let start = 0; start < count; start += 50) {
      const batch = Array.from({ length: Math.min(50, count - start) }, () =>
        api<{ thread_id: string }>(parley.base, "POST", "/threads", tenant.apiKey, { project_name: tenant.projectName }),
      );
      for (const created of await Promise.all(batch)) ids.push(created.thread_id);
    }
    return ids;
  }
}

/** The knowledge the built-in agent answers from in every chat benchmark: a small help desk. */
export const helpDeskConfig = {
  agent: {
    provider: "builtin",
    knowledge: [
      { question: "What are your opening hours?", answer: "We are open Monday to Friday, 9 am to 5 pm." },
      { question: "How much does it cost? What are your prices?", answer: "A standard consultation costs 40 dollars." },
      { question: "How do I book an appointment?", answer: "Tell me a day and time that suits you and I will book it." },
      { question: "Where is the office?", answer: "Our office is at 1 Main Street, next to the station." },
    ],
  },
  pricing: { message_usd: 0.002 },
};

export const chatQuestion = "Hello, what are your opening hours on Friday?";
/** What the built-in agent answers `chatQuestion` with `helpDeskConfig`. */
export const builtinAnswer = "We are open Monday to Friday, 9 am to 5 pm.";
