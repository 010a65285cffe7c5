import type { CallStatus, DisconnectionReason } from "../domain/calls/call-states.js";
import { jsonParam } from "./db.js";
import { type Queryable } from "../domain/shared/database.js";
import { threadEventsChannel } from "../domain/events/events-repository.js";
import type { CallRecord, NewCall, CallFilters, CallUtterance, CallsRepository, VendorTimes } from "../domain/calls/calls-repository.js";
import { callEndedChannel, callEndingChannel } from "../domain/calls/calls-repository.js";

const columns = `c.*, to_char(c.created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS created_key`;
const live = `('queued', 'ongoing')`;

/** Calls and their transitions. Every transition is conditional on the current status; see domain/call-states.ts. */
export class CallsStore implements CallsRepository {
  constructor(private readonly db: Queryable) {}

  /** Inserts a call; undefined when the thread already has an active phone call (the partial unique index). */
  async insert(call: NewCall, tx: Queryable = this.db): Promise<CallRecord | undefined> {
    const [row] = await tx.query<CallRecord>(
      `INSERT INTO calls AS c (id, organization_id, thread_id, project_id, config_version_id, call_type, direction, status,
                               from_number, to_number, voice_provider_account_id, scheduled_for, owner, heartbeat_at, provider,
                               appointment_opening_id, verification_code_sealed, max_call_seconds)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, CASE WHEN $13::text IS NULL THEN NULL ELSE now() END, $14, $15, $16, $17)
       ON CONFLICT DO NOTHING RETURNING ${columns}`,
      [
        call.id,
        call.organizationId,
        call.threadId,
        call.projectId,
        call.configVersionId,
        call.callType,
        call.direction,
        call.status,
        call.fromNumber,
        call.toNumber,
        call.voiceProviderAccountId,
        call.scheduledFor,
        call.owner,
        call.provider,
        call.appointmentOpeningId,
        call.verificationCodeSealed,
        call.maxCallSeconds,
      ],
    );
    return row;
  }

  async find(organizationId: string, id: string): Promise<CallRecord | undefined> {
    const [row] = await this.db.query<CallRecord>(`SELECT ${columns} FROM calls c WHERE c.id = $1 AND c.organization_id = $2`, [id, organizationId]);
    return row;
  }

  async findById(id: string, tx: Queryable = this.db): Promise<CallRecord | undefined> {
    const [row] = await tx.query<CallRecord>(`SELECT ${columns} FROM calls c WHERE c.id = $1`, [id]);
    return row;
  }

  /** The thread's phone call that still holds the line (queued, scheduled or ongoing), if any. */
  async activePhoneCall(organizationId: string, threadId: string): Promise<CallRecord | undefined> {
    const [row] = await this.db.query<CallRecord>(
      `SELECT ${columns} FROM calls c WHERE c.organization_id = $1 AND c.thread_id = $2 AND c.call_type = 'phone_call'
          AND c.status IN ('queued', 'scheduled', 'ongoing')`,
      [organizationId, threadId],
    );
    return row;
  }

  /** scheduled → queued: the one step that starts a scheduled call, so a duplicate delivery finds nothing to do. */
  async promote(id: string, owner: string | null, tx: Queryable = this.db): Promise<CallRecord | undefined> {
    const [row] = await tx.query<CallRecord>(
      `UPDATE calls c SET status = 'queued', owner = $2, heartbeat_at = CASE WHEN $2::text IS NULL THEN NULL ELSE now() END
        WHERE c.id = $1 AND c.status = 'scheduled' RETURNING ${columns}`,
      [id, owner],
    );
    return row;
  }

  /**
   * queued → ongoing, taken by the instance that will carry the call's live part; a call a vendor carries has no
   * owner here (null). `startedAt` is the vendor's own start time, when it reports one.
   */
  async connect(id: string, owner: string | null, tx: Queryable, startedAt?: Date): Promise<CallRecord | undefined> {
    const [row] = await tx.query<CallRecord>(
      `UPDATE calls c SET status = 'ongoing', started_at = least(clock_timestamp(), coalesce($3::timestamptz, clock_timestamp())), owner = $2,
              heartbeat_at = CASE WHEN $2::text IS NULL THEN NULL ELSE now() END
        WHERE c.id = $1 AND c.status = 'queued' RETURNING ${columns}`,
      [id, owner, startedAt ?? null],
    );
    return row;
  }

  async answer(id: string, tx: Queryable): Promise<CallRecord | undefined> {
    const [row] = await tx.query<CallRecord>(
      `UPDATE calls c SET status = 'ongoing', started_at = clock_timestamp(), owner = NULL, heartbeat_at = now()
        WHERE c.id = $1 AND c.status = 'queued' RETURNING ${columns}`,
      [id],
    );
    return row;
  }

  async carry(id: string, owner: string): Promise<CallRecord | undefined> {
    // An answered call awaiting its media is the only ongoing call with a heartbeat and no owner.
    const [row] = await this.db.query<CallRecord>(
      `UPDATE calls c SET owner = $2, heartbeat_at = now(), started_at = clock_timestamp()
        WHERE c.id = $1 AND c.status = 'ongoing' AND c.owner IS NULL AND c.heartbeat_at IS NOT NULL AND c.ending_reason IS NULL
        RETURNING ${columns}`,
      [id, owner],
    );
    return row;
  }

  async setConversation(id: string, conversationId: number, tx: Queryable): Promise<void> {
    await tx.query("UPDATE calls SET conversation_id = $2 WHERE id = $1", [id, conversationId]);
  }

  async requestEnd(id: string, reason: DisconnectionReason, tx: Queryable): Promise<CallRecord | undefined> {
    const [row] = await tx.query<CallRecord>(
      `UPDATE calls c SET ending_reason = coalesce(c.ending_reason, $2), ending_since = coalesce(c.ending_since, clock_timestamp())
        WHERE c.id = $1 AND c.status = 'ongoing' RETURNING ${columns}`,
      [id, reason],
    );
    if (row) await tx.query(`SELECT pg_notify('${callEndingChannel}', $1)`, [id]);
    return row;
  }

  async overdueEnds(seconds: number): Promise<string[]> {
    const rows = await this.db.query<{ id: string }>(
      `SELECT id FROM calls WHERE ending_reason IS NOT NULL AND status = 'ongoing' AND ending_since < now() - make_interval(secs => $1::float8) LIMIT 500`,
      [seconds],
    );
    return rows.map((row) => row.id);
  }

  async overLength(graceSeconds: number): Promise<string[]> {
    // The first bound lets the partial index skip the calls that started too recently to be over any limit (1 s at least).
    const rows = await this.db.query<{ id: string }>(
      `SELECT id FROM calls WHERE status = 'ongoing' AND ending_reason IS NULL
          AND started_at < now() - make_interval(secs => 1 + $1::float8)
          AND started_at < now() - make_interval(secs => max_call_seconds + $1::float8)
        LIMIT 500`,
      [graceSeconds],
    );
    return rows.map((row) => row.id);
  }

  async applyVendorTimes(id: string, times: VendorTimes, tx: Queryable): Promise<CallRecord | undefined> {
    const [row] = await tx.query<CallRecord>(
      `UPDATE calls c SET started_at = coalesce($2::timestamptz, c.started_at),
              ended_at = CASE WHEN c.status IN ('ended', 'error') THEN coalesce($3::timestamptz, c.ended_at) ELSE c.ended_at END,
              vendor_duration_seconds = coalesce($4::float8, c.vendor_duration_seconds)
        WHERE c.id = $1 AND c.started_at IS NOT NULL
          AND (($2::timestamptz IS NOT NULL AND c.started_at IS DISTINCT FROM $2::timestamptz)
            OR ($3::timestamptz IS NOT NULL AND c.status IN ('ended', 'error') AND c.ended_at IS DISTINCT FROM $3::timestamptz)
            OR ($4::float8 IS NOT NULL AND c.vendor_duration_seconds IS DISTINCT FROM $4::float8))
        RETURNING ${columns}`,
      [id, times.startedAt ?? null, times.endedAt ?? null, times.durationSeconds ?? null],
    );
    return row;
  }

  async bill(id: string, seconds: number, tx: Queryable): Promise<number> {
    const [row] = await tx.query<{ difference: number }>(
      `WITH before AS (SELECT billed_seconds FROM calls WHERE id = $1 FOR UPDATE)
       UPDATE calls c SET billed_seconds = $2::float8 FROM before WHERE c.id = $1
       RETURNING $2::float8 - coalesce(before.billed_seconds, 0) AS difference`,
      [id, seconds],
    );
    return row?.difference ?? 0;
  }

  /**
   * Ends a call that is in one of `from`. A call whose instance was lost ends at its last heartbeat, the last moment
   * it was known to run; `staleSeconds` then also requires the heartbeat to still be that old, so that an owner that
   * was only slow keeps its call.
   */
  async finish(
    id: string,
    from: readonly CallStatus[],
    status: "ended" | "error",
    reason: DisconnectionReason,
    tx: Queryable,
    staleSeconds?: number,
    end?: { endedAt?: Date; transcriptObject?: unknown; recordingKey?: string },
  ): Promise<CallRecord | undefined> {
    const [row] = await tx.query<CallRecord>(
      `UPDATE calls c SET status = $3, disconnection_reason = $4, owner = NULL,
              ended_at = CASE WHEN $6::timestamptz IS NOT NULL THEN greatest(coalesce(c.started_at, $6::timestamptz), $6::timestamptz)
                              WHEN $5::float8 IS NULL OR c.started_at IS NULL THEN clock_timestamp()
                              ELSE greatest(c.started_at, coalesce(c.heartbeat_at, clock_timestamp())) END,
              transcript_object = coalesce($7::jsonb, c.transcript_object), recording_key = coalesce($8, c.recording_key)
        WHERE c.id = $1 AND c.status = ANY($2::text[])
          AND ($5::float8 IS NULL OR c.heartbeat_at < now() - make_interval(secs => $5::float8))
        RETURNING ${columns}`,
      [
        id,
        [...from],
        status,
        reason,
        staleSeconds ?? null,
        end?.endedAt ?? null,
        end?.transcriptObject === undefined ? null : jsonParam(end.transcriptObject),
        end?.recordingKey ?? null,
      ],
    );
    return row;
  }

  /**
   * Appends one utterance of an ongoing call to its thread's history, with its `message.created` event, in a single
   * statement: the call is share-locked (it cannot end meanwhile), both per-thread counters move in one row update,
   * and the NOTIFY goes out on commit. This is the reply path of every call, and on PGlite each statement blocks the
   * event loop, so it is one statement rather than the six of a transaction over MessagesStore and EventsStore,
   * whose numbering it follows. Undefined when the call is not ongoing: nothing is stored.
   */
  async recordUtterance(
    callId: string,
    utterance: { id: string; role: "user" | "assistant"; content: string; extras: Record<string, unknown> },
    tx: Queryable = this.db,
  ): Promise<{ threadId: string; conversationId: number } | undefined> {
    const [row] = await tx.query<{ thread_id: string; conversation_id: number }>(
      `WITH call AS (
         SELECT thread_id, conversation_id FROM calls WHERE id = $1 AND status = 'ongoing' AND conversation_id IS NOT NULL FOR SHARE
       ), counters AS (
         UPDATE threads t SET last_message_seq = t.last_message_seq + 1, last_event_seq = t.last_event_seq + 1
           FROM call WHERE t.id = call.thread_id RETURNING t.last_message_seq, t.last_event_seq
       ), stored AS (
         SELECT counters.last_event_seq AS event_seq,
                parley_store_message(call.thread_id, counters.last_message_seq, counters.last_event_seq, $2, call.conversation_id, $3, $4,
                                     $5::jsonb || jsonb_build_object('call_id', $1::text, 'source', 'voice'), jsonb_build_object('call_id', $1::text))
           FROM call, counters
       )
       SELECT call.thread_id, call.conversation_id, pg_notify('${threadEventsChannel}', call.thread_id || ' ' || stored.event_seq)
         FROM call, stored`,
      [callId, utterance.id, utterance.role, utterance.content, jsonParam(utterance.extras)],
    );
    return row ? { threadId: row.thread_id, conversationId: row.conversation_id } : undefined;
  }

  /** Ends the call's own conversation; a chat may have started a newer one meanwhile, which stays active. */
  async endConversation(threadId: string, conversationId: number, tx: Queryable): Promise<void> {
    await tx.query("UPDATE conversations SET ended_at = clock_timestamp() WHERE thread_id = $1 AND conversation_id = $2 AND ended_at IS NULL", [
      threadId,
      conversationId,
    ]);
    await tx.query("UPDATE threads SET active_conversation_id = NULL WHERE id = $1 AND active_conversation_id = $2", [threadId, conversationId]);
  }

  /** Tells every instance, when the transaction commits, that the call ended (the one carrying it hangs up). */
  async announceEnded(id: string, reason: DisconnectionReason, tx: Queryable): Promise<void> {
    await tx.query(`SELECT pg_notify('${callEndedChannel}', $1)`, [`${id} ${reason}`]);
  }

  /** The live calls an instance carries. */
  async carriedBy(owner: string): Promise<string[]> {
    const rows = await this.db.query<{ id: string }>(`SELECT id FROM calls WHERE owner = $1 AND status IN ${live}`, [owner]);
    return rows.map((row) => row.id);
  }

  /** Web calls: the join token's hash and deadline, while the call still waits for its client. */
  async setJoinToken(id: string, tokenHash: string, deadline: Date): Promise<CallRecord | undefined> {
    const [row] = await this.db.query<CallRecord>(
      `UPDATE calls c SET access_token_hash = $2, join_deadline = $3 WHERE c.id = $1 AND c.status = 'queued' RETURNING ${columns}`,
      [id, tokenHash, deadline],
    );
    return row;
  }

  /** One statement per instance and beat: every live call this instance runs is vouched for. */
  async heartbeat(owner: string): Promise<void> {
    await this.db.query(`UPDATE calls SET heartbeat_at = now() WHERE owner = $1 AND status IN ${live}`, [owner]);
  }

  /** Live calls whose owner stopped beating, and queued web calls whose client missed the join deadline. */
  async abandoned(staleSeconds: number): Promise<{ stale: string[]; notJoined: string[] }> {
    const rows = await this.db.query<{ id: string; not_joined: boolean }>(
      `SELECT id, (call_type = 'web_call' AND status = 'queued' AND join_deadline < now()) AS not_joined FROM calls
        WHERE status IN ${live}
          AND (heartbeat_at < now() - make_interval(secs => $1::float8) OR (call_type = 'web_call' AND status = 'queued' AND join_deadline < now()))
        LIMIT 500`,
      [staleSeconds],
    );
    return { stale: rows.filter((row) => !row.not_joined).map((row) => row.id), notJoined: rows.filter((row) => row.not_joined).map((row) => row.id) };
  }

  /** The analysis of a call whose recording and transcript were written as it ended; once. */
  async saveAnalysis(id: string, analysis: unknown): Promise<CallRecord | undefined> {
    const [row] = await this.db.query<CallRecord>(
      `UPDATE calls c SET call_analysis = $2, processed_at = clock_timestamp() WHERE c.id = $1 AND c.processed_at IS NULL RETURNING ${columns}`,
      [id, jsonParam(analysis)],
    );
    return row;
  }

  /** The post-call results, written once. */
  async saveResults(id: string, results: { transcriptObject: unknown; recordingKey: string | null; analysis: unknown }): Promise<CallRecord | undefined> {
    const [row] = await this.db.query<CallRecord>(
      `UPDATE calls c SET transcript_object = $2, recording_key = coalesce($3, c.recording_key), call_analysis = $4, processed_at = clock_timestamp()
        WHERE c.id = $1 AND c.processed_at IS NULL RETURNING ${columns}`,
      [id, jsonParam(results.transcriptObject), results.recordingKey, jsonParam(results.analysis)],
    );
    return row;
  }

  /** The call's utterances from the thread's history, in order. */
  async utterances(threadId: string, callId: string, tx: Queryable = this.db): Promise<CallUtterance[]> {
    return tx.query<CallUtterance>(
      `SELECT role, content, created_at FROM messages WHERE thread_id = $1 AND extras ? 'call_id' AND extras->>'call_id' = $2 ORDER BY seq`,
      [threadId, callId],
    );
  }

  /** A page of the organization's calls, newest first by (created_at, id). */
  async list(organizationId: string, filters: CallFilters, limit: number): Promise<CallRecord[]> {
    return this.db.query<CallRecord>(
      `SELECT ${columns} FROM calls c
        WHERE c.organization_id = $1
          AND ($2::text[] IS NULL OR c.status = ANY($2::text[]))
          AND ($3::text[] IS NULL OR c.call_type = ANY($3::text[]))
          AND ($4::text[] IS NULL OR c.direction = ANY($4::text[]))
          AND ($5::timestamptz IS NULL OR c.created_at >= $5::timestamptz)
          AND ($6::timestamptz IS NULL OR c.created_at <= $6::timestamptz)
          AND ($7::timestamptz IS NULL OR c.created_at < $7::timestamptz)
          AND ($8::text IS NULL OR c.thread_id = $8::text)
          AND ($9::text IS NULL OR c.project_id IN (SELECT p.id FROM projects p WHERE p.organization_id = $1 AND p.name = $9::text))
          AND ($10::timestamptz IS NULL OR (c.created_at, c.id) < ($10::timestamptz, $11::text))
        ORDER BY c.created_at DESC, c.id DESC LIMIT $12`,
      [
        organizationId,
        filters.statuses ?? null,
        filters.callTypes ?? null,
        filters.directions ?? null,
        filters.from ?? null,
        filters.toInclusive ?? null,
        filters.toExclusive ?? null,
        filters.threadId ?? null,
        filters.projectName ?? null,
        filters.after?.createdKey ?? null,
        filters.after?.id ?? null,
        limit,
      ],
    );
  }
}
