import type { Queryable } from "../domain/shared/database.js";

/**
 * Sends NOTIFYs after the commits they announce, from a transaction of their own. A transaction that notifies holds
 * a database-wide lock until its commit is on disk, so durable writes that notified themselves committed one at a
 * time; these notifications commit without waiting for the disk, and those of a millisecond go out in one
 * statement (under load, one statement announces many turns). An instance that dies between a commit and its notification leaves the receivers to their
 * safety nets (see docs/architecture.md, "Notifications").
 */
/** How long a notification may wait for others to share its statement. */
const batchWindowMs = 1;

export class Notifier {
  private pending = new Map<string, Set<string>>();
  private scheduled = false;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(private readonly db: Queryable) {}

  notify(channel: string, payload: string): void {
    let payloads = this.pending.get(channel);
    if (!payloads) {
      payloads = new Set();
      this.pending.set(channel, payloads);
    }
    payloads.add(payload);
    if (!this.scheduled) {
      this.scheduled = true;
      setTimeout(() => this.flush(), batchWindowMs);
    }
  }

  /** Sends what is pending and waits for every send under way. */
  async close(): Promise<void> {
    this.flush();
    await Promise.all([...this.inFlight]);
  }

  private flush(): void {
    this.scheduled = false;
    if (this.pending.size === 0) return;
    const channels: string[] = [];
    const payloads: string[] = [];
    for (const [channel, set] of this.pending) {
      for (const payload of set) {
        channels.push(channel);
        payloads.push(payload);
      }
    }
    this.pending = new Map();
    const sent = this.db
      .query(
        `WITH no_flush AS (SELECT set_config('synchronous_commit', 'off', true))
         SELECT pg_notify(n.channel, n.payload) FROM no_flush, unnest($1::text[], $2::text[]) AS n(channel, payload)`,
        [channels, payloads],
      )
      .then(
        () => undefined,
        () => undefined,
      );
    this.inFlight.add(sent);
    void sent.then(() => this.inFlight.delete(sent));
  }
}
