import type { Queryable } from "../domain/shared/database.js";
import type { ListedThread, ThreadListFilters, ThreadListingRepository } from "../domain/threads/thread-listing-repository.js";

/** An organization's threads, newest first, a keyset page at a time. */
export class ThreadListingStore implements ThreadListingRepository {
  constructor(private readonly db: Queryable) {}

  async list(organizationId: string, filters: ThreadListFilters, limit: number): Promise<ListedThread[]> {
    return this.db.query<ListedThread>(
      `SELECT t.id, t.organization_id, t.type, t.alias, t.timezone, t.project_id, t.context, t.active_conversation_id,
              t.last_conversation_id, t.last_message_seq, t.billable_messages, t.billable_message_cost::text,
              t.voice_seconds::text, t.voice_cost::text, t.created_at,
              to_char(t.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_key,
              p.name AS project_name,
              (SELECT left(m.content, 200) FROM messages m WHERE m.thread_id = t.id AND m.role = 'user' ORDER BY m.seq LIMIT 1) AS first_user_message,
              (SELECT count(*) FROM calls c WHERE c.thread_id = t.id)::int AS call_count,
              GREATEST(
                t.created_at,
                (SELECT m.created_at FROM messages m WHERE m.thread_id = t.id AND m.seq = t.last_message_seq),
                (SELECT COALESCE(c.ended_at, c.started_at, c.created_at) FROM calls c WHERE c.thread_id = t.id ORDER BY c.created_at DESC LIMIT 1)
              ) AS last_activity_at
         FROM threads t LEFT JOIN projects p ON p.id = t.project_id
        WHERE t.organization_id = $1
          AND ($2::text IS NULL OR t.type = $2::text)
          AND ($3::text IS NULL OR EXISTS (
                SELECT 1 FROM projects named WHERE named.organization_id = $1 AND named.name = $3::text
                   AND (t.project_id = named.id
                        OR EXISTS (SELECT 1 FROM conversations c WHERE c.thread_id = t.id AND c.project_id = named.id))))
          AND ($4::timestamptz IS NULL OR (t.created_at, t.id) < ($4::timestamptz, $5::text))
        ORDER BY t.created_at DESC, t.id DESC
        LIMIT $6`,
      [organizationId, filters.type ?? null, filters.projectName ?? null, filters.before?.createdKey ?? null, filters.before?.id ?? null, limit],
    );
  }
}
