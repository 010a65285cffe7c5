import type { Queryable } from "../shared/database.js";

export interface ThreadRecord {
  id: string;
  organization_id: string;
  type: string;
  alias: string | null;
  timezone: string;
  project_id: string | null;
  context: Record<string, unknown>;
  active_conversation_id: number | null;
  last_conversation_id: number;
  last_message_seq: number;
  billable_messages: number;
  billable_message_cost: string;
  voice_seconds: string;
  voice_cost: string;
  created_at: Date;
}

/** A thread to insert. */
export interface NewThread {
  id: string;
  organizationId: string;
  type: string;
  alias: string | null;
  timezone: string;
  projectId: string | null;
  context: Record<string, unknown>;
}

export interface ThreadsRepository {
  /** Inserts a thread; false when its alias is already taken in the organization. */
  create(thread: NewThread): Promise<boolean>;
  find(organizationId: string, id: string, tx?: Queryable): Promise<ThreadRecord | undefined>;
  findByAlias(organizationId: string, alias: string): Promise<ThreadRecord | undefined>;
  /** Sets or clears the thread's alias: the thread, undefined when it is not the organization's, "taken" when another thread of the organization has the alias. */
  setAlias(organizationId: string, id: string, alias: string | null): Promise<ThreadRecord | undefined | "taken">;
  /** Shallow merge (later keys win) done in SQL, so concurrent inputs never overwrite each other's keys. */
  mergeContext(organizationId: string, id: string, patch: Record<string, unknown>): Promise<boolean>;
}
