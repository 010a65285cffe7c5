/** The one SQL dialect Parley speaks is PostgreSQL's; these interfaces hide whether PGlite or `pg` runs it. */
export interface Queryable {
  query<Row = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<Row[]>;
}

/** A transaction's session, which can also run a script of several statements (a migration) inside it. */
export interface Transaction extends Queryable {
  exec(script: string): Promise<void>;
}

export type NotificationHandler = (payload: string) => void;

/** `false` when the listener connection dropped (notifications may be lost from then on), `true` once it listens again. */
export type ListenerStateHandler = (listening: boolean) => void;

export interface Db extends Queryable {
  readonly kind: "pglite" | "postgres";
  transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T>;
  /** Runs a script of several statements (its own BEGIN and COMMIT included) as the server's simple protocol does. */
  exec(script: string): Promise<void>;
  listen(channel: string, handler: NotificationHandler): Promise<() => Promise<void>>;
  /** Whether notifications are being received now. Anything derived from them must not be trusted while false. */
  readonly listening: boolean;
  /**
   * Told when the listener connection drops and when it is back (after LISTEN on every channel again). Whoever relies
   * on notifications must assume it missed some in between: a gap.
   */
  onListenerState(handler: ListenerStateHandler): () => void;
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** A database failure that means "not reachable now" rather than "this request is wrong". */
export function isConnectionFailure(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string") {
    if (["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "ENOTFOUND", "57P01", "57P02", "57P03", "08000", "08003", "08006", "08001", "08004"].includes(code)) {
      return true;
    }
  }
  return /Connection terminated|connection timeout|Client has encountered a connection error|terminating connection/i.test(error.message);
}

/**
 * A value as the text of a json/jsonb parameter. JSON.stringify writes a lone surrogate (possible in any decoded
 * request string) as an escape that PostgreSQL refuses; it becomes U+FFFD here, as it does in text columns, where
 * the UTF-8 encoding of the wire replaces it.
 */
export function jsonParam(value: unknown): string {
  return JSON.stringify(value).replace(/(?<!\\)((?:\\\\)*)\\u(d[89a-f][0-9a-f]{2})/gi, "$1\\ufffd");
}
