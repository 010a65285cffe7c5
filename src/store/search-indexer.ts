import type { Logger } from "pino";
import type { Queryable } from "../domain/shared/database.js";

const batchSize = 1_000;

/** While messages arrive, rounds come this many times as often as the interval, so that batches stay small. */
const busySpeedup = 4;

/**
 * Moves the queued messages (migrations 010 and 014) into the trigram-indexed `message_search`, so that the chat
 * turn does not pay for the index. Every instance runs one; an advisory lock has them move one batch at a time. A
 * round comes every interval while the queue is found empty, and every quarter interval while messages arrive: a
 * message waits about a quarter interval plus the time of the batches before it (measured by the store benchmark),
 * and search finds it meanwhile by reading the queue.
 */
export class SearchIndexer {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly db: Queryable,
    private readonly intervalMs: number,
    private readonly log: Pick<Logger, "warn">,
  ) {}

  start(): void {
    this.stopped = false;
    this.schedule(this.intervalMs);
  }

  /** Indexes everything queued now, batch after batch, stopped or not; returns how many messages it took from the queue. */
  drain(): Promise<number> {
    return this.drainUnless(() => false);
  }

  private async drainUnless(stopped: () => boolean): Promise<number> {
    let total = 0;
    for (;;) {
      const [row] = await this.db.query<{ taken: number }>("SELECT parley_index_queued_messages($1) AS taken", [batchSize]);
      const taken = row?.taken ?? 0;
      total += taken;
      if (taken < batchSize || stopped()) return total;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.drainUnless(() => this.stopped)
        .then(
          (moved) => this.schedule(moved > 0 ? this.intervalMs / busySpeedup : this.intervalMs),
          (error: unknown) => {
            // The queue keeps what was not moved (the move is one transaction): the next round takes it.
            this.log.warn({ err: error }, "indexing queued messages for search failed; retrying");
            this.schedule(this.intervalMs);
          },
        );
    }, delayMs);
    this.timer.unref();
  }
}
