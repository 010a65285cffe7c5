import type { Logger } from "pino";
import type { Queryable } from "../domain/shared/database.js";

/**
 * Merges the trigram index's pending list into the index (migration 014), so that no chat turn does it: an insert
 * only appends its message's trigrams to the list, which search reads as well, so a message is found from its commit.
 * Every instance runs one; PostgreSQL has concurrent merges of one index wait for each other, and the later finds
 * little left.
 */
export class SearchIndexMerger {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private stopped = false;
  /** Pending-list pages merged by this merger since it was made (the `parley_search_index_merged_pages` gauge). */
  mergedPages = 0;
  /** When the last merge that succeeded began (ms since the epoch; 0 before the first): what was pending then is merged. */
  lastMergeBeganAt = 0;

  constructor(
    private readonly db: Queryable,
    private readonly intervalMs: number,
    private readonly log: Pick<Logger, "warn">,
  ) {}

  start(): void {
    this.stopped = false;
    this.schedule();
  }

  /** Merges what is pending now, stopped or not; returns how many pages of the pending list it merged. */
  async merge(): Promise<number> {
    const began = Date.now();
    const [row] = await this.db.query<{ pages: number }>("SELECT gin_clean_pending_list('messages_content_trgm'::regclass)::int AS pages");
    const pages = row?.pages ?? 0;
    this.mergedPages += pages;
    this.lastMergeBeganAt = began;
    return pages;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.merge()
        .then(
          () => undefined,
          // The list keeps what was not merged: the next round takes it.
          (error: unknown) => this.log.warn({ err: error }, "merging the search index's pending entries failed; retrying"),
        )
        .finally(() => this.schedule());
    }, this.intervalMs);
    this.timer.unref();
  }
}
