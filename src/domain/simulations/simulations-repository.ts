import type { Evaluation, SimulateSettingsView, SimulationTurn, StopReason } from "./simulation.js";

/** A stored simulation run: only runs with `create: true` are stored (a dry run writes nothing). */
export interface SimulationRecord {
  id: string;
  organizationId: string;
  projectId: string;
  projectName: string;
  configVersionId: string;
  sourceThreadId: string;
  threadId: string;
  settings: SimulateSettingsView;
  turns: SimulationTurn[];
  stopReason: StopReason;
  evaluation: Evaluation | null;
  createdAt: Date;
}

/** The port the simulation service needs; store/simulations-store.ts implements it in SQL. */
export interface SimulationsRepository {
  insert(run: Omit<SimulationRecord, "createdAt">): Promise<SimulationRecord>;
  /** Sets the evaluation of a stored run (judged after the run was stored). */
  setEvaluation(organizationId: string, id: string, evaluation: Evaluation): Promise<void>;
  /** The run when it belongs to the organization; undefined otherwise. */
  find(organizationId: string, id: string): Promise<SimulationRecord | undefined>;
}
