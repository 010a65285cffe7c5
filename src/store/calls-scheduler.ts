import PgBoss from "pg-boss";
import type { Logger } from "pino";
import type { CallJobHandlers, CallJobs } from "../domain/calls/scheduling.js";
import type { Db, Queryable } from "../domain/shared/database.js";

const startQueue = "parley_call_start";
const processingQueue = "parley_call_results";
/** unique_violation, duplicate_schema, duplicate_object, deadlock_detected, serialization_failure */
const installRaceCodes = new Set(["23505", "42P06", "42710", "40P01", "40001"]);

/**
 * pg-boss's `db` option over Parley's `Queryable`, so that it runs on PGlite as on PostgreSQL and can write a job
 * inside the caller's transaction. PGlite's extended protocol takes one statement per query, so pg-boss's
 * parameterless scripts (schema creation and maintenance, `BEGIN; …; COMMIT` included) go through `exec`.
 */
function executor(db: Db | Queryable): PgBoss.Db {
  return {
    async executeSql(text: string, values?: unknown[]) {
      if ((values !== undefined && values.length > 0) || !("exec" in db)) return { rows: await db.query(text, values) };
      if (!/;\s*\S/.test(text)) return { rows: await db.query(text) };
      await db.exec(text);
      return { rows: [] };
    },
  };
}

/** Call jobs on pg-boss: its SKIP LOCKED fetch hands each job to one instance, and it keeps jobs across restarts. */
export class PgBossCallJobs implements CallJobs {
  private readonly boss: PgBoss;
  private processingWorker: string | undefined;

  constructor(
    db: Db,
    private readonly pollSeconds: number,
    private readonly log: Logger,
  ) {
    this.boss = new PgBoss({ db: executor(db), schedule: false, supervise: true, maintenanceIntervalSeconds: 60 });
    this.boss.on("error", (error: unknown) => this.log.warn({ err: error }, "pg-boss reported an error"));
  }

  async start(handlers: CallJobHandlers): Promise<void> {
    await this.install();
    const options = { pollingIntervalSeconds: this.pollSeconds, batchSize: 20 };
    await this.boss.work<{ callId: string }>(startQueue, options, async (jobs) => {
      await Promise.all(jobs.map((job) => handlers.startScheduledCall(job.data.callId)));
    });
    this.processingWorker = await this.boss.work<{ callId: string }>(processingQueue, { ...options, batchSize: 5 }, async (jobs) => {
      await Promise.all(jobs.map((job) => handlers.processEndedCall(job.data.callId)));
    });
  }

  /**
   * Instances starting together on a fresh database race to install pg-boss's schema and queues: the losers see a
   * unique violation or a deadlock (both seen with three instances started at once). Each step is idempotent once
   * the winner has committed, so the loser starts over.
   */
  private async install(): Promise<void> {
    for (let attempt = 1; ; attempt += 1) {
      try {
        await this.boss.start();
        await this.boss.createQueue(startQueue, { name: startQueue, retryLimit: 5, retryDelay: 1 });
        await this.boss.createQueue(processingQueue, { name: processingQueue, retryLimit: 3, retryDelay: 5 });
        return;
      } catch (error) {
        const code = (error as { code?: unknown }).code;
        if (attempt >= 5 || typeof code !== "string" || !installRaceCodes.has(code)) throw error;
        this.log.warn({ attempt, code }, "another instance was installing pg-boss; starting over");
        await new Promise((resolve) => setTimeout(resolve, 100 * attempt + Math.random() * 200));
      }
    }
  }

  async scheduleStart(callId: string, at: Date, tx: Queryable): Promise<void> {
    await this.boss.send(startQueue, { callId }, { startAfter: at, db: executor(tx) });
  }

  async enqueueProcessing(callId: string, tx: Queryable): Promise<void> {
    await this.boss.send(processingQueue, { callId }, { db: executor(tx) });
  }

  wakeProcessing(): void {
    if (this.processingWorker) this.boss.notifyWorker(this.processingWorker);
  }

  async stop(): Promise<void> {
    await this.boss.stop({ graceful: true, wait: true, timeout: 10_000 });
  }
}
