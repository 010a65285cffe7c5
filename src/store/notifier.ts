import type { Db, Notification } from "../domain/shared/database.js";

/**
 * Sends notifications after the commits they announce (`Db.notify`). One send is in flight at a time: what is
 * notified while it runs goes out in the next, so that under load one statement announces many turns, and an idle
 * notification goes out at once. An instance that dies between a commit and its notification leaves the receivers
 * to their safety nets (see docs/architecture.md, "Notifications").
 */
export class Notifier {
  private pending = new Map<string, Set<string>>();
  private scheduled = false;
  private sending: Promise<void> | undefined;

  constructor(private readonly db: Pick<Db, "notify">) {}

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
    const notifications: Notification[] = [];
    for (const [channel, payloads] of this.pending) for (const payload of payloads) notifications.push({ channel, payload });
    this.pending = new Map();
    this.sending = this.db
      .notify(notifications)
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
