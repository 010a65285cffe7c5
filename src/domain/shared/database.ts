/** The one SQL dialect Parley speaks is PostgreSQL's; these interfaces hide whether PGlite or `pg` runs it. */
export interface Queryable {
  query<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<Row[]>;
}

/** A transaction's session, which can also run a script of several statements (a migration) inside it. */
export interface Transaction extends Queryable {
  exec(script: string): Promise<void>;
}

export type NotificationHandler = (payload: string) => void;

export interface Notification {
  channel: string;
  payload: string;
}

/** `false` when the listener connection dropped (notifications may be lost from then on), `true` once it listens again. */
export type ListenerStateHandler = (listening: boolean) => void;

export interface Db extends Queryable {
  readonly kind: "pglite" | "postgres";
  transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T>;
  /**
   * One statement in a transaction of its own whose rows come back as soon as it has run, with the commit under way
   * and not yet durable: `committed` settles once it is (and rejects when the commit failed, having changed nothing).
   * For a caller that may start something else while the commit is flushing, and shows nothing of it before then.
   * On PGlite, whose commit is not flushed on the side, `committed` has already settled when the rows come.
   */
  queryCommittingLater<Row = Record<string, unknown>>(sql: string, params: readonly unknown[]): Promise<{ rows: Row[]; committed: Promise<void> }>;
  /** Runs a script of several statements (its own BEGIN and COMMIT included) as the server's simple protocol does. */
  exec(script: string): Promise<void>;
  listen(channel: string, handler: NotificationHandler): Promise<() => Promise<void>>;
  /**
   * Announces commits already made, as NOTIFYs would: on PostgreSQL one statement in a transaction of its own whose
   * commit does not wait for the disk; on PGlite, whose listeners are all in this process, straight to them, without
   * a statement (one would hold the event loop for milliseconds). Delivery is never synchronous with the call.
   */
  notify(notifications: readonly Notification[]): Promise<void>;
  /** Whether notifications are being received now. Anything derived from them must not be trusted while false. */
  readonly listening: boolean;
  /**
   * Told when the listener connection drops and when it is back (after LISTEN on every channel again). Whoever relies
   * on notifications must assume it missed some in between: a gap.
   */
  onListenerState(handler: ListenerStateHandler): () => void;
  /** The database session (backend pid) on which this Db listens, while it does: what its acknowledgements name. */
  readonly listenerSession: number | undefined;
  /** The sessions listening for every Parley instance on this database, this one's included. */
  listenerSessions(): Promise<number[]>;
  ping(): Promise<void>;
  close(): Promise<void>;
}
