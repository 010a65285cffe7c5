import type { Queryable } from "../domain/shared/database.js";

/**
 * Sends NOTIFYs after the commits they announce, from a transaction of their own. A transaction that notifies holds
 * a database-wide lock until its commit is on disk, so durable writes that notified themselves committed one at a
 * time; these notifications commit without waiting for the disk. One statement is in flight at a time: what is
 * notified while it runs goes out in the next, so that under load one statement announces many turns, and an idle
 * notification goes out at once. An instance that dies between a commit and its notification leaves the receivers
 * to their safety nets (see docs/architecture.md, "Notifications").
 */
export class Notifier {
  private pending = new Map<string, Set<string>>();
  private scheduled = false;
  private sending: Promise<void> | undefined;

  constructor(private readonly db: Queryable) {}

  notify(channel: string, payload: string): void {
    let payloads = this.pending.get(channel);
    if (!payloads) {
      payloads = new Set();
      this.pending.set(channel, payloads);
    }
    payloads.add(payload);
    if (!this.scheduled && !this.sending) {
      // Those of the same turn of the event loop share the statement, which is sent after that turn's own writes (a
      // reply, a stream's first token) rather than before them.
      this.scheduled = true;
      setImmediate(() => this.flush());
    }
  }

  /** Waits until everything notified so far has been sent. */
  async close(): Promise<void> {
    while (this.sending || this.pending.size > 0) {
      if (!this.sending) this.flush();
      await this.sending;
    }
  }

  private flush(): void {
    this.scheduled = false;
    if (this.sending || this.pending.size === 0) return;
    const channels: string[] = [];
    const payloads: string[] = [];
    for (const [channel, set] of this.pending) {
      for (const payload of set) {
        channels.push(channel);
        payloads.push(payload);
      }
    }
    this.pending = new Map();
    this.sending = this.db
      .query(
        `WITH no_flush AS (SELECT set_config('synchronous_commit', 'off', true))
         SELECT pg_notify(n.channel, n.payload) FROM no_flush, unnest($1::text[], $2::text[]) AS n(channel, payload)`,
        [channels, payloads],
      )
      .then(
        () => undefined,
        () => undefined,
      )
      .finally(() => {
        this.sending = undefined;
        this.flush();
      });
  }
}
