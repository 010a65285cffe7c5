import PgBoss from "pg-boss";
import type { Db, Queryable, Transaction } from "../domain/shared/database.js";

/**
 * Copies a whole Parley database (every table the migrations created, and pg-boss's jobs) into an empty one with the
 * same schema, ids included. The target is written in one transaction: a copy that fails or does not verify leaves
 * the target as it was, so it can simply be run again.
 */

/** A table to copy: schema-qualified, its columns in order, and the key that pages through it. */
interface TableSpec {
  schema: string;
  name: string;
  columns: string[];
  key: string[];
}

export interface TableVerification {
  table: string;
  rows: number;
  checksum: string;
}

export interface CopyProgress {
  table: string;
  tableRows: number;
  tableTotal: number;
  copied: number;
  total: number;
}

export interface CopyOptions {
  batchRows?: number;
  onProgress?: (progress: CopyProgress) => void;
}

export class CopyRefused extends Error {}

const jobSchema = "pgboss";
/** pg-boss's tables copied row for row once its queues exist; its `version` row is made by its own schema script. */
const jobTables = ["schedule", "subscription", "job", "archive"];

const quote = (identifier: string) => `"${identifier.replaceAll('"', '""')}"`;
const qualified = (table: Pick<TableSpec, "schema" | "name">) => `${quote(table.schema)}.${quote(table.name)}`;
const label = (table: Pick<TableSpec, "schema" | "name">) => (table.schema === "public" ? table.name : `${table.schema}.${table.name}`);

/** Settings under which a row's text form, and so its checksum, is the same on any server. */
const canonicalSettings = ["TimeZone = 'UTC'", "DateStyle = 'ISO, YMD'", "IntervalStyle = 'postgres'", "extra_float_digits = 3", "bytea_output = 'hex'"];

async function canonicalize(db: Queryable, local: boolean): Promise<void> {
  for (const setting of canonicalSettings) await db.query(`SET ${local ? "LOCAL " : ""}${setting}`);
}

/** The tables of a schema in an order that satisfies their foreign keys (a table after those it references). */
async function tablesOf(db: Queryable, schema: string, exclude: readonly string[]): Promise<TableSpec[]> {
  const rows = await db.query<{ name: string; columns: string[]; key: string[] | null; refs: string[] | null }>(
    `SELECT c.relname AS name,
            (SELECT array_agg(a.attname::text ORDER BY a.attnum) FROM pg_attribute a
              WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped AND a.attgenerated = '') AS columns,
            (SELECT array_agg(a.attname::text ORDER BY array_position(i.indkey::int2[], a.attnum)) FROM pg_index i
               JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey::int2[])
              WHERE i.indrelid = c.oid AND i.indisprimary) AS key,
            (SELECT array_agg(DISTINCT r.relname::text) FROM pg_constraint f JOIN pg_class r ON r.oid = f.confrelid
              WHERE f.conrelid = c.oid AND f.contype = 'f' AND f.confrelid <> c.oid) AS refs
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition
      ORDER BY c.relname`,
    [schema],
  );
  const pending = rows.filter((row) => !exclude.includes(row.name));
  const ordered: TableSpec[] = [];
  while (pending.length > 0) {
    const index = pending.findIndex((row) => (row.refs ?? []).every((ref) => ordered.some((table) => table.name === ref) || !pending.some((other) => other.name === ref)));
    if (index < 0) throw new Error(`the foreign keys of ${pending.map((row) => row.name).join(", ")} form a cycle`);
    const [row] = pending.splice(index, 1);
    ordered.push({ schema, name: row!.name, columns: row!.columns, key: row!.key ?? row!.columns });
  }
  return ordered;
}

async function schemaExists(db: Queryable, schema: string): Promise<boolean> {
  const [row] = await db.query<{ present: boolean }>("SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1) AS present", [schema]);
  return row?.present ?? false;
}

async function rowCount(db: Queryable, table: TableSpec): Promise<number> {
  const [row] = await db.query<{ rows: string }>(`SELECT count(*)::text AS rows FROM ${qualified(table)}`);
  return Number(row?.rows ?? 0);
}

/**
 * Row count and an order-independent checksum of the rows' text (the sum of two 60-bit slices of each row's md5),
 * computed alike on both databases under the canonical settings.
 */
async function verification(db: Queryable, table: TableSpec): Promise<TableVerification> {
  const columns = table.columns.map(quote).join(", ");
  const [row] = await db.query<{ rows: string; checksum: string }>(
    `SELECT count(*)::text AS rows,
            coalesce(sum(('x' || substr(h, 1, 15))::bit(60)::bigint::numeric), 0)::text || '-' ||
            coalesce(sum(('x' || substr(h, 16, 15))::bit(60)::bigint::numeric), 0)::text AS checksum
       FROM (SELECT md5(ROW(${columns})::text) AS h FROM ${qualified(table)}) AS hashed`,
  );
  return { table: label(table), rows: Number(row?.rows ?? 0), checksum: row?.checksum ?? "" };
}

/** Pages through a table in key order; each page is one JSON array, so every value crosses exactly as stored. */
async function* pages(db: Queryable, table: TableSpec, batchRows: number): AsyncGenerator<{ json: string; count: number }> {
  const columns = table.columns.map(quote).join(", ");
  const key = table.key.map(quote).join(", ");
  // Every key column reversed: `ORDER BY a, b DESC` would reverse `b` alone, and a page spanning two values of `a`
  // would then resume before its own end (issue 21: page 2 of thread_events re-read page 1).
  const keyDescending = table.key.map((column) => `${quote(column)} DESC`).join(", ");
  const lastKey = `json_build_object(${table.key.map((column) => `'${column.replaceAll("'", "''")}', ${quote(column)}`).join(", ")})`;
  const aggregates = `count(*)::int AS count, coalesce(json_agg(page ORDER BY ${key}), '[]')::text AS json, (array_agg(${lastKey} ORDER BY ${keyDescending}))[1]::text AS last`;
  const first = `SELECT ${aggregates} FROM (SELECT ${columns} FROM ${qualified(table)} ORDER BY ${key} LIMIT ${batchRows}) AS page`;
  const next = `SELECT ${aggregates}
                  FROM (SELECT ${columns} FROM ${qualified(table)}
                         WHERE (${key}) > (SELECT ${key} FROM json_populate_record(NULL::${qualified(table)}, $1::json))
                         ORDER BY ${key} LIMIT ${batchRows}) AS page`;
  let last: string | undefined;
  for (;;) {
    const [page] = await db.query<{ count: number; json: string; last: string | null }>(last === undefined ? first : next, last === undefined ? undefined : [last]);
    if (!page || page.count === 0) return;
    yield { json: page.json, count: page.count };
    if (page.count < batchRows || page.last === null) return;
    last = page.last;
  }
}

async function insertPage(tx: Queryable, table: TableSpec, json: string): Promise<void> {
  const columns = table.columns.map(quote).join(", ");
  await tx.query(`INSERT INTO ${qualified(table)} (${columns}) SELECT ${columns} FROM json_populate_recordset(NULL::${qualified(table)}, $1::json)`, [json]);
}

async function appliedMigrations(db: Queryable): Promise<string[]> {
  return (await db.query<{ name: string }>("SELECT name FROM schema_migrations ORDER BY name")).map((row) => row.name);
}

/** Refuses unless every table of the target is empty; lists those that are not. */
async function requireEmpty(target: Queryable, tables: TableSpec[]): Promise<void> {
  const filled: string[] = [];
  for (const table of tables) {
    const count = await rowCount(target, table);
    if (count > 0) filled.push(`${label(table)} (${count} rows)`);
  }
  if (filled.length > 0) {
    throw new CopyRefused(
      `the target database is not empty: ${filled.join(", ")}. Copy into a new, empty database (e.g. createdb parley); nothing was copied.`,
    );
  }
}

/** Creates pg-boss's schema on the target when missing and its queues as the source has them, with their settings. */
async function prepareJobQueues(source: Queryable, target: Transaction): Promise<TableSpec[]> {
  const [sourceVersion] = await source.query<{ version: number }>(`SELECT version FROM ${jobSchema}.version`);
  if (!(await schemaExists(target, jobSchema))) {
    // The plan is a script with its own BEGIN and COMMIT; here it runs inside the copy's transaction, without them.
    await target.exec(PgBoss.getConstructionPlans(jobSchema).replace(/^\s*BEGIN;/, "").replace(/COMMIT;\s*$/, ""));
  }
  const [targetVersion] = await target.query<{ version: number }>(`SELECT version FROM ${jobSchema}.version`);
  if (sourceVersion?.version !== targetVersion?.version) {
    throw new CopyRefused(
      `the job queue schemas differ (source version ${sourceVersion?.version}, target ${targetVersion?.version}): start Parley once on the data folder with this version, then copy again`,
    );
  }
  const queues = await source.query<{ name: string; options: string; created_on: string; updated_on: string }>(
    `SELECT name, json_build_object('policy', policy, 'retryLimit', retry_limit, 'retryDelay', retry_delay, 'retryBackoff', retry_backoff,
                                    'expireInSeconds', expire_seconds, 'retentionMinutes', retention_minutes, 'deadLetter', dead_letter)::text AS options,
            created_on::text, updated_on::text
       FROM ${jobSchema}.queue ORDER BY dead_letter IS NOT NULL, name`,
  );
  for (const queue of queues) {
    await target.query(`SELECT ${jobSchema}.create_queue($1, $2::json)`, [queue.name, queue.options]);
    await target.query(`UPDATE ${jobSchema}.queue SET created_on = $2::timestamptz, updated_on = $3::timestamptz WHERE name = $1`, [
      queue.name,
      queue.created_on,
      queue.updated_on,
    ]);
  }
  const tables = await tablesOf(source, jobSchema, []);
  const byName = new Map(tables.map((table) => [table.name, table]));
  return jobTables.map((name) => byName.get(name)).filter((table): table is TableSpec => table !== undefined);
}

/**
 * Copies `source` into `target`. Both must already be migrated to the same schema (the caller runs the migrations);
 * the target must be empty. Returns the verification of every table, identical on both sides.
 */
export async function copyDatabase(source: Db, target: Db, options: CopyOptions = {}): Promise<TableVerification[]> {
  const batchRows = options.batchRows ?? 1_000;
  const [sourceMigrations, targetMigrations] = [await appliedMigrations(source), await appliedMigrations(target)];
  if (sourceMigrations.join() !== targetMigrations.join()) {
    throw new CopyRefused(`the schemas differ: source has migrations ${sourceMigrations.join(", ")}; target ${targetMigrations.join(", ")}`);
  }
  await canonicalize(source, false);
  const tables = await tablesOf(source, "public", ["schema_migrations", "schema_functions"]);
  const withJobs = await schemaExists(source, jobSchema);
  const jobSourceTables = withJobs ? (await tablesOf(source, jobSchema, [])).filter((table) => jobTables.includes(table.name)) : [];
  const totals = new Map<TableSpec, number>();
  for (const table of [...tables, ...jobSourceTables]) totals.set(table, await rowCount(source, table));
  const total = [...totals.values()].reduce((sum, count) => sum + count, 0);

  return target.transaction(async (tx) => {
    await canonicalize(tx, true);
    await requireEmpty(tx, tables);
    if (withJobs && (await schemaExists(tx, jobSchema))) await requireEmpty(tx, (await tablesOf(tx, jobSchema, ["version"])));
    const jobTargetTables = withJobs ? await prepareJobQueues(source, tx) : [];
    // The rows arrive as they are, derived tables included (the search queue and index): the triggers that derive
    // them, or announce changes to running instances, stay silent during the copy.
    for (const table of tables) await tx.query(`ALTER TABLE ${qualified(table)} DISABLE TRIGGER USER`);
    const copied = { rows: 0 };
    const copyTable = async (table: TableSpec, tableTotal: number) => {
      let tableRows = 0;
      options.onProgress?.({ table: label(table), tableRows, tableTotal, copied: copied.rows, total });
      for await (const page of pages(source, table, batchRows)) {
        await insertPage(tx, table, page.json);
        tableRows += page.count;
        copied.rows += page.count;
        options.onProgress?.({ table: label(table), tableRows, tableTotal, copied: copied.rows, total });
      }
    };
    for (const table of tables) await copyTable(table, totals.get(table) ?? 0);
    for (const table of jobTargetTables) {
      const sourceTable = jobSourceTables.find((candidate) => candidate.name === table.name);
      await copyTable(table, sourceTable ? (totals.get(sourceTable) ?? 0) : 0);
    }

    for (const table of tables) await tx.query(`ALTER TABLE ${qualified(table)} ENABLE TRIGGER USER`);
    const verified: TableVerification[] = [];
    const queueTable = withJobs ? (await tablesOf(source, jobSchema, [])).filter((table) => table.name === "queue") : [];
    for (const table of [...tables, ...queueTable, ...jobTargetTables]) {
      const [expected, actual] = [await verification(source, table), await verification(tx, table)];
      if (expected.rows !== actual.rows || expected.checksum !== actual.checksum) {
        throw new Error(
          `verification failed for ${expected.table}: source ${expected.rows} rows (checksum ${expected.checksum}), target ${actual.rows} rows (checksum ${actual.checksum}); nothing was committed`,
        );
      }
      verified.push(actual);
    }
    return verified;
  });
}
