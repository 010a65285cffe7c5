import pg from "pg";
import type { ListenerStateHandler, NotificationHandler } from "../domain/shared/database.js";

/** How every instance's listener session is named, so that an instance can count the others (`Db.listenerSessions`). */
export const listenerApplicationName = "parley-listener";

const firstRetryMs = 100;
const maxRetryMs = 5_000;

/**
 * The one connection on which an instance LISTENs. PostgreSQL forgets a session's LISTENs with the session and does
 * not replay what was sent meanwhile, so when the connection drops the listener says so at once (subscribers must
 * distrust what they derived from notifications), reconnects with backoff, LISTENs on every channel again and only
 * then reports that it listens again.
 */
export class PostgresListener {
  private readonly handlers = new Map<string, Set<NotificationHandler>>();
  private readonly stateHandlers = new Set<ListenerStateHandler>();
  private client: pg.Client | undefined;
  private clientSession: number | undefined;
  /** Channels LISTENed on the current client. */
  private listened = new Set<string>();
  private connecting: Promise<pg.Client> | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private retryMs = firstRetryMs;
  private connectedOnce = false;
  private closed = false;

  constructor(private readonly clientConfig: pg.ClientConfig) {}

  get listening(): boolean {
    return this.client !== undefined;
  }

  /** The backend pid of the listening connection, while there is one. */
  get session(): number | undefined {
    return this.client && this.clientSession;
  }

  onState(handler: ListenerStateHandler): () => void {
    this.stateHandlers.add(handler);
    return () => this.stateHandlers.delete(handler);
  }

  async listen(channel: string, handler: NotificationHandler): Promise<() => Promise<void>> {
    let set = this.handlers.get(channel);
    if (!set) {
      set = new Set();
      this.handlers.set(channel, set);
    }
    set.add(handler);
    const unlisten = async () => {
      set.delete(handler);
      if (set.size > 0 || this.handlers.get(channel) !== set) return;
      this.handlers.delete(channel);
      // A session that listens for nobody would be counted among the instances that acknowledge changes.
      if (this.handlers.size === 0) await this.disconnect();
    };
    if (this.client) {
      await this.listenOn(this.client, channel);
    } else if (!this.connectedOnce) {
      // The first connection is made on demand, and its failure is the caller's (as at start, with the database down).
      await this.listenOn(await this.connect(), channel);
    }
    // Otherwise a reconnection is under way, and it LISTENs on every channel before it reports that it listens.
    return unlisten;
  }

  /** Ends the connection until something listens again. */
  private async disconnect(): Promise<void> {
    clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = undefined;
    this.connectedOnce = false;
    await client?.end().catch(() => undefined);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    const client = this.client ?? (await this.connecting?.catch(() => undefined));
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private connect(): Promise<pg.Client> {
    this.connecting ??= (async () => {
      const client = new pg.Client({ ...this.clientConfig, application_name: listenerApplicationName, keepAlive: true, keepAliveInitialDelayMillis: 10_000 });
      client.on("notification", (message) => {
        if (client !== this.client) return;
        for (const handler of this.handlers.get(message.channel) ?? []) handler(message.payload ?? "");
      });
      // Either may come first when the backend is terminated; the connection is lost once.
      client.on("error", () => this.lost(client));
      client.on("end", () => this.lost(client));
      try {
        await client.connect();
        const [row] = (await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid")).rows;
        this.clientSession = row?.pid;
        this.listened = new Set();
        for (const channel of this.handlers.keys()) await this.listenOn(client, channel);
      } catch (error) {
        await client.end().catch(() => undefined);
        throw error;
      }
      if (this.closed) {
        await client.end().catch(() => undefined);
        throw new Error("listener closed");
      }
      this.client = client;
      this.connectedOnce = true;
      this.retryMs = firstRetryMs;
      this.tell(true);
      return client;
    })().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async listenOn(client: pg.Client, channel: string): Promise<void> {
    if (this.listened.has(channel)) return;
    this.listened.add(channel);
    await client.query(`LISTEN "${channel.replace(/"/g, "")}"`);
  }

  private lost(client: pg.Client): void {
    if (client !== this.client) return;
    this.client = undefined;
    this.tell(false);
    client.end().catch(() => undefined);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed) return;
    this.retryTimer = setTimeout(() => {
      this.connect().catch(() => {
        this.retryMs = Math.min(this.retryMs * 2, maxRetryMs);
        this.scheduleReconnect();
      });
    }, this.retryMs);
  }

  private tell(listening: boolean): void {
    for (const handler of this.stateHandlers) handler(listening);
  }
}
