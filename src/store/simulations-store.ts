import type { Evaluation, SimulateSettingsView, SimulationTurn, StopReason } from "../domain/simulations/simulation.js";
import type { SimulationRecord, SimulationsRepository } from "../domain/simulations/simulations-repository.js";
import type { Queryable } from "../domain/shared/database.js";
import { jsonParam } from "./db.js";

interface SimulationRow {
  id: string;
  organization_id: string;
  project_id: string;
  project_name: string;
  config_version_id: string;
  source_thread_id: string;
  thread_id: string;
  settings: SimulateSettingsView;
  turns: SimulationTurn[];
  stop_reason: StopReason;
  evaluation: Evaluation | null;
  created_at: Date;
}

function recordOf(row: SimulationRow): SimulationRecord {
  return {
    id: row.id,
    organizationId: row.organization_id,
    projectId: row.project_id,
    projectName: row.project_name,
    configVersionId: row.config_version_id,
    sourceThreadId: row.source_thread_id,
    threadId: row.thread_id,
    settings: row.settings,
    turns: row.turns,
    stopReason: row.stop_reason,
    evaluation: row.evaluation,
    createdAt: row.created_at,
  };
}

/** Simulation runs in the `simulations` table of migration 009; every read and write is scoped to the organization. */
export class PostgresSimulationsStore implements SimulationsRepository {
  constructor(private readonly db: Queryable) {}

  async insert(run: Omit<SimulationRecord, "createdAt">): Promise<SimulationRecord> {
    const [row] = await this.db.query<{ created_at: Date }>(
      `INSERT INTO simulations (id, organization_id, project_id, config_version_id, source_thread_id, thread_id, settings, turns, stop_reason, evaluation)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING created_at`,
      [
        run.id,
        run.organizationId,
        run.projectId,
        run.configVersionId,
        run.sourceThreadId,
        run.threadId,
        jsonParam(run.settings),
        jsonParam(run.turns),
        run.stopReason,
        run.evaluation === null ? null : jsonParam(run.evaluation),
      ],
    );
    if (!row) throw new Error(`simulation ${run.id} was not stored`);
    return { ...run, createdAt: row.created_at };
  }

  async setEvaluation(organizationId: string, id: string, evaluation: Evaluation): Promise<void> {
    await this.db.query("UPDATE simulations SET evaluation = $3 WHERE id = $1 AND organization_id = $2", [id, organizationId, jsonParam(evaluation)]);
  }

  async find(organizationId: string, id: string): Promise<SimulationRecord | undefined> {
    const [row] = await this.db.query<SimulationRow>(
      `SELECT s.id, s.organization_id, s.project_id, p.name AS project_name, s.config_version_id, s.source_thread_id, s.thread_id,
              s.settings, s.turns, s.stop_reason, s.evaluation, s.created_at
         FROM simulations s JOIN projects p ON p.id = s.project_id
        WHERE s.id = $1 AND s.organization_id = $2`,
      [id, organizationId],
    );
    return row ? recordOf(row) : undefined;
  }
}
