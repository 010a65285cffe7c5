import { jsonParam } from "./db.js";
import type { Db } from "../domain/shared/database.js";
import { threadEventsChannel } from "../domain/events/events-repository.js";
import type { Notifier } from "./notifier.js";
import { unlockChannel } from "./thread-locks.js";
import { LeaseBusyError, type ThreadLease } from "../domain/threads/thread-locks.js";
import type { OpenedTurn, TurnsRepository } from "../domain/chat/turns-repository.js";

type TurnOpening = Parameters<TurnsRepository["open"]>[0];

const openStatement = "SELECT conversation_id, history, event_seq FROM parley_open_turn($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)";

interface OpenedRow {
  conversation_id: number;
  history: OpenedTurn["history"];
  event_seq: number | null;
}

function openParams(turn: TurnOpening, lease: ThreadLease | null): unknown[] {
  return [
    turn.threadId,
    turn.projectId,
    turn.startNewConversation,
    turn.userMessage?.id ?? null,
    turn.userMessage?.content ?? null,
    turn.userMessage ? jsonParam(turn.userMessage.extras) : null,
    turn.historyLimit,
    lease?.token ?? null,
    lease?.pid ?? null,
    lease?.seconds ?? null,
  ];
}

/** The opened turn, and its message's event (null without a user's message); no row: another holder has the lease. */
function opening([row]: OpenedRow[]): { opened: OpenedTurn; eventSeq: number | null } {
  if (!row) throw new LeaseBusyError();
  return { opened: { conversationId: row.conversation_id, history: row.history }, eventSeq: row.event_seq };
}

/**
 * The writes of one chat turn as two statements (the SQL functions `parley_open_turn` and `parley_close_turn`, each in
 * its file in src/store/functions/): `open` before the model is called, `close` after. Each is one transaction, so
 * that a turn costs the database two commits; the events they append (and a released lease) are announced once each
 * has committed.
 */
export class TurnsStore implements TurnsRepository {
  constructor(
    private readonly db: Pick<Db, "query" | "queryCommittingLater">,
    private readonly notifier: Notifier,
  ) {}

  /**
   * Takes the lease (when given), finds or opens the conversation, stores the user's message (when given) with its
   * event, and reads the history. Throws LeaseBusyError, having changed nothing, while another holder has the lease.
   */
  async open(turn: TurnOpening, lease: ThreadLease | null): Promise<OpenedTurn> {
    const { opened, eventSeq } = opening(await this.db.query<OpenedRow>(openStatement, openParams(turn, lease)));
    if (eventSeq !== null) this.announce(turn.threadId, eventSeq);
    return opened;
  }

  async openFlushing(turn: TurnOpening, lease: ThreadLease | null): Promise<OpenedTurn & { durable: Promise<void> }> {
    const { rows, committed } = await this.db.queryCommittingLater<OpenedRow>(openStatement, openParams(turn, lease));
    let result: ReturnType<typeof opening>;
    try {
      result = opening(rows);
    } catch (error) {
      // Refused (the lease is held), having changed nothing: its transaction ends before the next attempt.
      await committed.catch(() => undefined);
      throw error;
    }
    const { opened, eventSeq } = result;
    const durable = committed.then(() => {
      if (eventSeq !== null) this.announce(turn.threadId, eventSeq);
    });
    return { ...opened, durable };
  }

  private announce(threadId: string, eventSeq: number): void {
    this.notifier.notify(threadEventsChannel, `${threadId} ${eventSeq}`);
  }

  /** Stores the reply with its event and bills it; releases the lease when given. Resolves with the event's number. */
  async close(
    turn: { threadId: string; conversationId: number; reply: { id: string; content: string; extras: Record<string, unknown> }; priceUsd: number },
    lease: ThreadLease | null,
  ): Promise<{ eventSeq: number }> {
    const [row] = await this.db.query<{ event_seq: number; released: boolean }>("SELECT event_seq, released FROM parley_close_turn($1, $2, $3, $4, $5, $6, $7)", [
      turn.threadId,
      turn.conversationId,
      turn.reply.id,
      turn.reply.content,
      jsonParam(turn.reply.extras),
      String(turn.priceUsd),
      lease?.token ?? null,
    ]);
    if (!row) throw new Error(`parley_close_turn returned nothing for thread ${turn.threadId}`);
    lease?.markReleased();
    this.announce(turn.threadId, row.event_seq);
    if (row.released) this.notifier.notify(unlockChannel, turn.threadId);
    return { eventSeq: Number(row.event_seq) };
  }
}
