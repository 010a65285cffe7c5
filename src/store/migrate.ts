import { createHash } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { Db, Transaction } from "../domain/shared/database.js";

const migrationsDir = fileURLToPath(new URL("./migrations/", import.meta.url));
const functionsDir = fileURLToPath(new URL("./functions/", import.meta.url));

/** One instance migrates at a time: the others wait on this lock, then find nothing left to do. */
const MIGRATION_LOCK = 7352001;

/**
 * Migrations are recorded by file name. A file renamed after it shipped names its former name here, so that a
 * database that applied it under that name does not apply it again. `007_thread_listing.sql` was written beside
 * `007_rate_limits.sql` on another branch; the letter keeps it in its place in the history.
 */
const formerNames: Record<string, string> = {
  "007a_thread_listing.sql": "007_thread_listing.sql",
};

/**
 * Brings the schema up to date, one instance at a time (an advisory lock held by the transaction):
 * 1. the numbered SQL files in `migrations/` not yet applied, in order: the history of the schema;
 * 2. the SQL functions in `functions/`, one file per function holding its current body (`CREATE OR REPLACE`), each
 *    applied when its content differs from what was last applied here (a hash per file in `schema_functions`).
 * A change to a function's body is an edit of its file. A change of its signature (arguments, result columns), which
 * `CREATE OR REPLACE` refuses, is a numbered migration that drops the old function; its file then creates the new one.
 * Functions are applied after the migrations, so a migration cannot call a function changed in the same release.
 * With `until` (a migration's file name) only the migrations up to it are applied, and no function file: the
 * benchmark compares the schema before and after a migration, as that migration left it.
 */
export async function migrate(db: Db, until?: string): Promise<string[]> {
  const files = (await readdir(migrationsDir)).filter((name) => /^\d{3}[a-z]?_.+\.sql$/.test(name) && (until === undefined || name <= until)).sort();
  return db.transaction(async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock($1)", [MIGRATION_LOCK]);
    await tx.query("CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())");
    for (const [name, former] of Object.entries(formerNames)) {
      await tx.query("UPDATE schema_migrations SET name = $1 WHERE name = $2", [name, former]);
    }
    const done = new Set((await tx.query<{ name: string }>("SELECT name FROM schema_migrations")).map((row) => row.name));
    const applied: string[] = [];
    for (const name of files) {
      if (done.has(name)) continue;
      await tx.exec(await readFile(migrationsDir + name, "utf8"));
      await tx.query("INSERT INTO schema_migrations (name) VALUES ($1)", [name]);
      applied.push(name);
    }
    if (until === undefined) applied.push(...(await applyFunctions(tx, functionsDir)));
    return applied;
  });
}

/**
 * Applies each `*.sql` file of `dir` whose content changed since it was last applied (or never was), and records its
 * hash; returns the files applied. Runs inside the migration's transaction, under its lock.
 */
export async function applyFunctions(tx: Transaction, dir: string): Promise<string[]> {
  await tx.query("CREATE TABLE IF NOT EXISTS schema_functions (name text PRIMARY KEY, sha256 text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())");
  const recorded = new Map((await tx.query<{ name: string; sha256: string }>("SELECT name, sha256 FROM schema_functions")).map((row) => [row.name, row.sha256]));
  const applied: string[] = [];
  for (const name of (await readdir(dir)).filter((file) => file.endsWith(".sql")).sort()) {
    const sql = await readFile(dir + name, "utf8");
    const sha256 = createHash("sha256").update(sql).digest("hex");
    if (recorded.get(name) === sha256) continue;
    await tx.exec(sql);
    await tx.query(
      "INSERT INTO schema_functions (name, sha256) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET sha256 = excluded.sha256, applied_at = now()",
      [name, sha256],
    );
    applied.push(name);
  }
  return applied;
}
