import { jsonParam } from "./db.js";
import { type Queryable } from "../domain/shared/database.js";
import type { NewThread, ThreadRecord } from "../domain/threads/threads-repository.js";

const threadColumns = `id, organization_id, type, alias, timezone, project_id, context, active_conversation_id,
  last_conversation_id, last_message_seq, billable_messages, billable_message_cost::text, voice_seconds::text, voice_cost::text, created_at`;

export class ThreadsStore {
  constructor(private readonly db: Queryable) {}

  /** Inserts a thread; false when its alias is already taken in the organization. */
  async create(thread: NewThread): Promise<boolean> {
    const rows = await this.db.query(
      `INSERT INTO threads (id, organization_id, type, alias, timezone, project_id, context)
       VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING RETURNING id`,
      [thread.id, thread.organizationId, thread.type, thread.alias, thread.timezone, thread.projectId, jsonParam(thread.context)],
    );
    return rows.length > 0;
  }

  async find(organizationId: string, id: string, tx: Queryable = this.db): Promise<ThreadRecord | undefined> {
    const [row] = await tx.query<ThreadRecord>(`SELECT ${threadColumns} FROM threads WHERE id = $1 AND organization_id = $2`, [id, organizationId]);
    return row;
  }

  async findByAlias(organizationId: string, alias: string): Promise<ThreadRecord | undefined> {
    const [row] = await this.db.query<ThreadRecord>(`SELECT ${threadColumns} FROM threads WHERE organization_id = $1 AND alias = $2`, [organizationId, alias]);
    return row;
  }

  /** The unique index on (organization_id, alias) decides between concurrent claims of one alias. */
  async setAlias(organizationId: string, id: string, alias: string | null): Promise<ThreadRecord | undefined | "taken"> {
    try {
      const [row] = await this.db.query<ThreadRecord>(
        `UPDATE threads SET alias = $3 WHERE id = $1 AND organization_id = $2 RETURNING ${threadColumns}`,
        [id, organizationId, alias],
      );
      return row;
    } catch (error) {
      if (isUniqueViolation(error)) return "taken";
      throw error;
    }
  }

  /** Shallow merge (later keys win) done in SQL, so concurrent inputs never overwrite each other's keys. */
  async mergeContext(organizationId: string, id: string, patch: Record<string, unknown>): Promise<boolean> {
    const rows = await this.db.query(
      "UPDATE threads SET context = context || $3::jsonb WHERE id = $1 AND organization_id = $2 RETURNING id",
      [id, organizationId, jsonParam(patch)],
    );
    return rows.length > 0;
  }
}

function isUniqueViolation(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === "23505";
}
