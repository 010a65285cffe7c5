/**
 * The baseline of the chat benchmarks: the statements Parley issues for one chat turn, in the same transactions,
 * issued directly with `pg` (or PGlite's own API) and nothing else. The texts are copies of those in src/store;
 * `sql-trace.ts` checks at every run that they still match what Parley really sends.
 */
import { randomUUID } from "node:crypto";
import type { PGlite } from "@electric-sql/pglite";
import pg from "pg";

export interface SqlRunner {
  query(sql: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
}

export interface SqlTarget extends SqlRunner {
  transaction<T>(work: (tx: SqlRunner) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** What a turn includes besides the conversation's own statements. */
export interface TurnShape {
  /** The API key lookup of an HTTP request. */
  auth: boolean;
  /** The thread lease Parley takes on PostgreSQL (PGlite's lock is in-process and issues no SQL). */
  lease: boolean;
  /** The two `message.created` events the app appends with the messages. */
  events: boolean;
}

export interface TurnIds {
  apiKeyHash: string;
  organizationId: string;
  projectId: string;
  projectName: string;
  threadId: string;
}

export function directPostgres(url: string, poolSize: number): SqlTarget {
  const pool = new pg.Pool({ connectionString: url, max: poolSize });
  pool.on("error", () => undefined);
  return {
    query: async (sql, params) => (await pool.query(sql, params)).rows as Record<string, unknown>[],
    async transaction(work) {
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        const result = await work({ query: async (sql, params) => (await client.query(sql, params)).rows as Record<string, unknown>[] });
        await client.query("COMMIT");
        return result;
      } catch (error) {
        await client.query("ROLLBACK");
        throw error;
      } finally {
        client.release();
      }
    },
    close: () => pool.end(),
  };
}

export function directPglite(database: PGlite): SqlTarget {
  return {
    query: async (sql, params) => (await database.query<Record<string, unknown>>(sql, params)).rows,
    transaction: (work) => database.transaction((tx) => work({ query: async (sql, params) => (await tx.query<Record<string, unknown>>(sql, params)).rows })),
    close: () => database.close(),
  };
}

const threadColumns = `id, organization_id, type, alias, timezone, project_id, context, active_conversation_id,
  last_conversation_id, last_message_seq, billable_messages, billable_message_cost::text, voice_seconds::text, voice_cost::text, created_at`;
const messageColumns = `m.id, m.seq, m.conversation_id, m.role, m.content, m.extras, m.created_at, c.ended_at AS conversation_ended_at`;
const fromMessages = `FROM messages m JOIN conversations c ON c.thread_id = m.thread_id AND c.conversation_id = m.conversation_id`;
const appendMessage = `WITH next AS (UPDATE threads SET last_message_seq = last_message_seq + 1 WHERE id = $2 RETURNING last_message_seq)
       INSERT INTO messages (id, thread_id, seq, conversation_id, role, content, extras)
       SELECT $1, $2, next.last_message_seq, $3, $4, $5, $6 FROM next
       RETURNING seq, created_at`;

/** The `message.created` event Parley appends inside the transaction that stores the message. */
async function appendEvent(tx: SqlRunner, threadId: string, payload: Record<string, unknown>): Promise<void> {
  const [row] = await tx.query(
    `WITH next AS (UPDATE threads SET last_event_seq = last_event_seq + 1 WHERE id = $1 RETURNING last_event_seq)
       INSERT INTO thread_events (thread_id, seq, type, payload) SELECT $1, next.last_event_seq, $2, $3 FROM next RETURNING seq`,
    [threadId, "message.created", JSON.stringify(payload)],
  );
  await tx.query(`SELECT pg_notify('parley_thread_events', $1)`, [`${threadId} ${String(row?.seq)}`]);
}

const asyncCommit = "WITH no_flush AS (SELECT set_config('synchronous_commit', 'off', true))";

/**
 * One turn: look-ups, lease, transaction 1 (conversation, user message and its event, history), transaction 2
 * (reply and its event, usage), release.
 */
export async function directTurn(target: SqlTarget, ids: TurnIds, shape: TurnShape, question: string, answer: string): Promise<void> {
  if (shape.auth) {
    await target.query(
      `SELECT id, organization_id, revoked_at,
              (last_used_at IS NULL OR last_used_at < now() - interval '1 minute') AS stale
         FROM api_keys WHERE key_hash = $1`,
      [ids.apiKeyHash],
    );
  }
  await target.query(`SELECT ${threadColumns} FROM threads WHERE id = $1 AND organization_id = $2`, [ids.threadId, ids.organizationId]);
  await target.query("SELECT id, organization_id, name, current_config_version_id, created_at FROM projects WHERE organization_id = $1 AND name = $2", [
    ids.organizationId,
    ids.projectName,
  ]);
  const token = randomUUID();
  if (shape.lease) {
    await target.query(
      `${asyncCommit} UPDATE threads SET lock_token = $2, lock_pid = $3, lock_until = now() + make_interval(secs => $4)
          FROM no_flush WHERE id = $1 AND (lock_token IS NULL OR lock_until < now()
                OR NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.pid = threads.lock_pid))
          RETURNING id`,
      [ids.threadId, token, 0, 30],
    );
  }
  const userId = randomUUID();
  const conversationId = await target.transaction(async (tx) => {
    const [thread] = await tx.query("SELECT active_conversation_id, last_conversation_id FROM threads WHERE id = $1 FOR UPDATE", [ids.threadId]);
    let conversation = thread?.active_conversation_id as number | null;
    if (conversation === null) {
      conversation = Number(thread?.last_conversation_id) + 1;
      await tx.query("INSERT INTO conversations (thread_id, conversation_id, project_id) VALUES ($1, $2, $3)", [ids.threadId, conversation, ids.projectId]);
      await tx.query("UPDATE threads SET active_conversation_id = $2, last_conversation_id = $2 WHERE id = $1", [ids.threadId, conversation]);
    }
    await tx.query(appendMessage, [userId, ids.threadId, conversation, "user", question, JSON.stringify({ user_type: "user" })]);
    if (shape.events) await appendEvent(tx, ids.threadId, { message: { message_id: userId, role: "user", message: question, conversation_id: conversation } });
    await tx.query(`SELECT ${messageColumns} ${fromMessages}
        WHERE m.thread_id = $1 AND m.conversation_id = $2 ORDER BY m.seq DESC LIMIT $3`, [ids.threadId, conversation, 41]);
    return conversation;
  });
  const replyId = randomUUID();
  await target.transaction(async (tx) => {
    await tx.query(appendMessage, [replyId, ids.threadId, conversationId, "assistant", answer, JSON.stringify({ provider: "builtin" })]);
    await tx.query(
      "UPDATE threads SET billable_messages = billable_messages + 1, billable_message_cost = billable_message_cost + $2::numeric WHERE id = $1",
      [ids.threadId, "0.002"],
    );
    if (shape.events) await appendEvent(tx, ids.threadId, { message: { message_id: replyId, role: "assistant", message: answer, conversation_id: conversationId } });
  });
  if (shape.lease) {
    await target.query(
      `${asyncCommit}, released AS (UPDATE threads SET lock_token = NULL, lock_pid = NULL, lock_until = NULL FROM no_flush
                                            WHERE id = $1 AND lock_token = $2 RETURNING id)
             SELECT pg_notify('parley_thread_unlocked', id) FROM released`,
      [ids.threadId, token],
    );
  }
}
