import pg from "pg";
import { isConnectionFailure } from "./db.js";
import { type Db, type Notification, type Transaction } from "../domain/shared/database.js";
import { listenerApplicationName, PostgresListener } from "./postgres-listener.js";

/** int8 as a JS number, as PGlite returns it, so that repositories read the same values from both. */
function getTypeParser(oid: number, format?: "text" | "binary"): (value: string) => unknown {
  if (oid === pg.types.builtins.INT8) return (value: string) => Number(value);
  return pg.types.getTypeParser(oid, format ?? "text") as (value: string) => unknown;
}

const maxPreparedStatements = 1_000;

/** pg's own conversion of a parameter to its text on the wire (a Date, an array, an object as JSON…). */
const { prepareValue } = (pg as unknown as { utils: { prepareValue(value: unknown): Buffer | string | null } }).utils;

/**
 * The parameters as they go on the wire, or the error converting one of them: a submittable returns that error
 * before writing anything, and pg's client then fails the statement and goes on with the next.
 */
function wireValues(values: readonly unknown[]): (Buffer | string | null)[] | Error {
  try {
    return values.map((value) => prepareValue(value));
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}

/** Parse, bind and execute of `text`, which has no parameters and returns no rows, as the unnamed statement. */
function unnamed(connection: pg.Connection, text: string): void {
  connection.parse({ name: "", text, types: [] }, true);
  connection.bind({ statement: "", values: [] }, true);
  connection.execute({ portal: "" }, true);
}

/** A result column: its name and how its text is read. */
interface Column {
  name: string;
  parse: (value: string) => unknown;
}

function columnsOf(message: { fields: { name: string; dataTypeID: number }[] }): Column[] {
  return message.fields.map((field) => ({ name: field.name, parse: getTypeParser(field.dataTypeID) }));
}

function rowOf<Row>(columns: readonly Column[], fields: readonly (string | null)[]): Row {
  const row: Record<string, unknown> = {};
  for (let index = 0; index < columns.length; index++) {
    const column = columns[index]!;
    const value = fields[index];
    row[column.name] = value === null || value === undefined ? null : column.parse(value);
  }
  return row as Row;
}

/** What pg's connection keeps of the statements it has parsed (by name: their text), which pg's types leave out. */
type ParsingConnection = pg.Connection & { parsedStatements: Record<string, string> };

/**
 * The columns of each named statement's rows, per connection, described once: its later executions go without a
 * Describe, and so without a RowDescription to read and turn into parsers each time.
 */
const describedColumns = new WeakMap<pg.Connection, Map<string, Column[]>>();

/** Whether this connection has parsed the statement `name`, and its columns when they have been described on it. */
function statementOn(connection: pg.Connection, name: string, text: string): { parsed: boolean; columns: Column[] | undefined } {
  const parsed = (connection as ParsingConnection).parsedStatements[name] === text;
  return { parsed, columns: parsed ? describedColumns.get(connection)?.get(name) : undefined };
}

function keepColumns(connection: pg.Connection, name: string, columns: Column[]): void {
  let described = describedColumns.get(connection);
  if (!described) {
    described = new Map();
    describedColumns.set(connection, described);
  }
  described.set(name, columns);
}

/**
 * What a named statement's submittables share: its parameters on the wire, whether the connection has parsed it and
 * its columns there, and its rows read from a list of columns described once per connection.
 */
abstract class DescribedStatement<Row> {
  protected columns: Column[] | undefined;
  /** The connection whose description of this statement is still to be kept. */
  private remember: pg.Connection | undefined;
  protected readonly received: Row[] = [];

  constructor(
    /** Read by pg's client, which records the statement as parsed on this connection once the server has. */
    readonly name: string,
    readonly text: string,
    private readonly values: readonly unknown[],
  ) {}

  /** The parameters on the wire and whether `connection` has parsed the statement, or the error converting one. */
  protected prepareOn(connection: pg.Connection): { values: (Buffer | string | null)[]; parsed: boolean } | Error {
    const values = wireValues(this.values);
    if (values instanceof Error) return values;
    const { parsed, columns } = statementOn(connection, this.name, this.text);
    this.columns = columns;
    if (!columns) this.remember = connection;
    return { values, parsed };
  }

  handleRowDescription(message: { fields: { name: string; dataTypeID: number }[] }): void {
    this.columns = columnsOf(message);
    if (this.remember) keepColumns(this.remember, this.name, this.columns);
  }

  handleDataRow(message: { fields: (string | null)[] }): void {
    this.received.push(rowOf<Row>(this.columns ?? [], message.fields));
  }
}

/**
 * A named statement with its parameters, parsed once per connection, as pg's own Query sends it (in one write) but
 * with less around it: no Describe once its columns are known, no Result object, rows made from a list of columns.
 */
class PreparedStatement<Row> extends DescribedStatement<Row> implements pg.Submittable {
  readonly rows: Promise<Row[]>;
  private resolve!: (rows: Row[]) => void;
  private reject!: (error: unknown) => void;

  constructor(name: string, text: string, values: readonly unknown[]) {
    super(name, text, values);
    this.rows = new Promise((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
  }

  submit(connection: pg.Connection): Error | undefined {
    const prepared = this.prepareOn(connection);
    if (prepared instanceof Error) return prepared;
    connection.stream.cork();
    try {
      if (!prepared.parsed) connection.parse({ name: this.name, text: this.text, types: [] }, true);
      connection.bind({ statement: this.name, values: prepared.values }, true);
      if (!this.columns) connection.describe({ type: "P", name: "" }, true);
      connection.execute({ portal: "" }, true);
      connection.sync();
    } finally {
      connection.stream.uncork();
    }
    return undefined;
  }

  handleCommandComplete(): void {}

  handleEmptyQuery(): void {}

  handleError(error: unknown): void {
    this.reject(error);
  }

  handleReadyForQuery(): void {
    this.resolve(this.received);
  }
}

/**
 * A statement sent in one write between a BEGIN and a COMMIT, with a Flush after it: the server runs the three back
 * to back and sends the statement's rows before it commits, so that they come back after one round trip while the
 * commit is flushed to disk, rather than after three (BEGIN, the statement, COMMIT). The statement is named, as
 * `PreparedStatement`s are: parsed (first in the write, so that the first ParseComplete the client records is its
 * own) and described only on a connection that has not yet done so; BEGIN and COMMIT go unnamed. An error makes the
 * server skip the rest (the transaction is then aborted, and must be rolled back).
 */
class StatementCommittingLater<Row> extends DescribedStatement<Row> implements pg.Submittable {
  readonly rows: Promise<Row[]>;
  readonly committed: Promise<void>;
  private resolveRows!: (rows: Row[]) => void;
  private rejectRows!: (error: unknown) => void;
  private resolveCommitted!: () => void;
  private rejectCommitted!: (error: unknown) => void;
  /** CommandComplete messages so far: BEGIN's, the statement's, COMMIT's. */
  private completed = 0;
  private failed = false;

  constructor(name: string, text: string, values: readonly unknown[]) {
    super(name, text, values);
    this.rows = new Promise((resolve, reject) => {
      this.resolveRows = resolve;
      this.rejectRows = reject;
    });
    this.committed = new Promise((resolve, reject) => {
      this.resolveCommitted = resolve;
      this.rejectCommitted = reject;
    });
    // Whoever waits on one of the two hears a failure; the other must not count as unhandled.
    this.rows.catch(() => undefined);
    this.committed.catch(() => undefined);
  }

  submit(connection: pg.Connection): Error | undefined {
    const prepared = this.prepareOn(connection);
    if (prepared instanceof Error) return prepared;
    const { values, parsed } = prepared;
    const described = this.columns !== undefined;
    connection.stream.cork();
    try {
      // Unnamed (past the bound of named statements), it is parsed after BEGIN's own unnamed parse.
      if (!parsed && this.name !== "") connection.parse({ name: this.name, text: this.text, types: [] }, true);
      unnamed(connection, "BEGIN");
      if (!parsed && this.name === "") connection.parse({ name: "", text: this.text, types: [] }, true);
      connection.bind({ statement: this.name, values }, true);
      if (!described) connection.describe({ type: "P", name: "" }, true);
      connection.execute({ portal: "" }, true);
      connection.flush();
      unnamed(connection, "COMMIT");
      connection.sync();
    } finally {
      connection.stream.uncork();
    }
    return undefined;
  }

  handleCommandComplete(): void {
    this.completed += 1;
    if (this.completed === 2) this.resolveRows(this.received);
  }

  handleError(error: unknown): void {
    this.failed = true;
    this.rejectRows(error);
    this.rejectCommitted(error);
  }

  handleReadyForQuery(): void {
    if (!this.failed) this.resolveCommitted();
  }
}

/**
 * Names for the statements the code issues, so that each connection parses and plans them once rather than on every
 * call (a third of the database's work for a short look-up). The code has a fixed set of statement texts; should
 * some ever be built from data, the names stop at a bound and the rest run unnamed.
 */
function preparedStatementNames(): (sql: string) => string | undefined {
  const names = new Map<string, string>();
  return (sql) => {
    let name = names.get(sql);
    if (name === undefined && names.size < maxPreparedStatements && /^\s*(SELECT|INSERT|UPDATE|DELETE|WITH)\b/i.test(sql)) {
      name = `parley_${names.size + 1}`;
      names.set(sql, name);
    }
    return name;
  };
}

/** A checked-out client whose connection drops emits "error": its statement fails with it, and the process goes on. */
function ignoreClientError(): void {}

/**
 * Notifications from a transaction of their own, after the commits they announce. A transaction that notifies holds
 * a database-wide lock until its commit is on disk; this one commits without waiting for the disk.
 */
export const notifyStatement = `WITH no_flush AS (SELECT set_config('synchronous_commit', 'off', true))
         SELECT pg_notify(n.channel, n.payload) FROM no_flush, unnest($1::text[], $2::text[]) AS n(channel, payload)`;

/**
 * One field of every notification as a text[] literal: each element quoted, backslashes and quotes escaped. Written
 * here rather than by the driver, whose conversion of an array made several strings per element: this is one join.
 */
function textArrayLiteral(notifications: readonly Notification[], field: keyof Notification): string {
  if (notifications.length === 0) return "{}";
  const values = notifications.map((notification) => notification[field]);
  const elements = values.some((value) => /["\\]/.test(value)) ? values.map((value) => value.replace(/["\\]/g, "\\$&")) : values;
  return `{"${elements.join('","')}"}`;
}

/** A real PostgreSQL through a connection pool: how Parley scales to several instances. */
export function openPostgres(connectionString: string, poolSize: number): Db {
  // Parley's queries are short keyset lookups; JIT compilation (PostgreSQL's default above a cost threshold that a
  // few generate_series rows can cross) cost 9 ms on a 0.4 ms search-context query, so it is off for our sessions.
  const pool = new pg.Pool({ connectionString, max: poolSize, connectionTimeoutMillis: 5_000, types: { getTypeParser }, options: "-c jit=off" });
  // An idle client losing its connection (database restart) must not crash the process.
  pool.on("error", () => undefined);
  // Nor a checked-out one (its statement fails with it): listened to for the client's whole life rather than around
  // each statement, which made and dropped the client's listener table every time.
  pool.on("connect", (client) => client.on("error", ignoreClientError));
  const statementName = preparedStatementNames();
  /** A statement on a client of its own: named with its parameters, else through pg's Query (the simple protocol without). */
  const run = async <Row>(client: pg.PoolClient, sql: string, params?: readonly unknown[]): Promise<Row[]> => {
    const name = params ? statementName(sql) : undefined;
    if (name) return client.query(new PreparedStatement<Row>(name, sql, params!)).rows;
    const result = await client.query(params ? { text: sql, values: [...params] } : { text: sql });
    return result.rows as Row[];
  };
  /** A statement on a pooled connection, which goes back to the pool after it (closed, as pg's pool does, when it failed). */
  const runPooled = async <Row>(sql: string, params?: readonly unknown[]): Promise<Row[]> => {
    const client = await pool.connect();
    let rows: Row[];
    try {
      rows = await run<Row>(client, sql, params);
    } catch (error) {
      client.release(error instanceof Error ? error : true);
      throw error;
    }
    client.release();
    return rows;
  };
  const listener = new PostgresListener({ connectionString, types: { getTypeParser } });

  /** A pooled client for a transaction of its own, with how to hand it back (dropped when its connection was lost). */
  async function checkOut(): Promise<{ client: pg.PoolClient; release(lost: boolean): void }> {
    const client = await pool.connect();
    // A checked-out client whose connection drops emits "error"; unhandled, that would end the process.
    let dropped = false;
    const ignoreDrop = () => {
      dropped = true;
    };
    client.on("error", ignoreDrop);
    return {
      client,
      release: (lost) => {
        client.off("error", ignoreDrop);
        client.release(dropped || lost);
      },
    };
  }

  /** Ends a transaction that failed: rolled back, unless its connection is gone (then nothing is left to reuse). */
  async function abandon(client: pg.PoolClient, release: (lost: boolean) => void, error: unknown): Promise<void> {
    const lost = isConnectionFailure(error);
    if (!lost) await client.query("ROLLBACK").catch(() => undefined);
    release(lost);
  }

  async function transaction<T>(work: (tx: Transaction) => Promise<T>): Promise<T> {
    const { client, release } = await checkOut();
    let result: T;
    try {
      await client.query("BEGIN");
      result = await work({ query: (sql, params) => run(client, sql, params), exec: async (script) => void (await client.query(script)) });
      await client.query("COMMIT");
    } catch (error) {
      await abandon(client, release, error);
      throw error;
    }
    release(false);
    return result;
  }

  async function queryCommittingLater<Row>(sql: string, params: readonly unknown[]): Promise<{ rows: Row[]; committed: Promise<void> }> {
    const { client, release } = await checkOut();
    const statement = new StatementCommittingLater<Row>(statementName(sql) ?? "", sql, params);
    client.query(statement);
    // A failed COMMIT ends the transaction (rolled back); a failed statement leaves it aborted, to be rolled back.
    const committed = statement.committed.then(
      () => release(false),
      async (error: unknown) => {
        await abandon(client, release, error);
        throw error;
      },
    );
    try {
      return { rows: await statement.rows, committed };
    } catch (error) {
      await committed.catch(() => undefined);
      throw error;
    }
  }

  return {
    kind: "postgres",
    query: runPooled,
    notify: async (notifications) => {
      await runPooled(notifyStatement, [textArrayLiteral(notifications, "channel"), textArrayLiteral(notifications, "payload")]);
    },
    // A query without parameters goes by the simple protocol, which takes several statements on one connection.
    exec: async (script) => void (await pool.query(script)),
    transaction,
    queryCommittingLater,
    listen: (channel, handler) => listener.listen(channel, handler),
    get listening() {
      return listener.listening;
    },
    onListenerState: (handler) => listener.onState(handler),
    get listenerSession() {
      return listener.session;
    },
    listenerSessions: async () =>
      (
        await pool.query<{ pid: number }>(
          "SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()",
          [listenerApplicationName],
        )
      ).rows.map((row) => row.pid),
    async ping() {
      await pool.query("SELECT 1");
    },
    async close() {
      await listener.close();
      await pool.end();
    },
  };
}
