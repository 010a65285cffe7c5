import { readdir, readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import type { Db } from "../domain/shared/database.js";

const migrationsDir = fileURLToPath(new URL("./migrations/", import.meta.url));

/**
 * Applies the numbered SQL files not yet applied, each in its own transaction, one instance at a time; with `until`
 * (a file name), only those up to it (the benchmark compares the schema before and after a migration).
 */
export async function migrate(db: Db, until?: string): Promise<string[]> {
  const files = (await readdir(migrationsDir)).filter((name) => /^\d{3}_.+\.sql$/.test(name) && (until === undefined || name <= until)).sort();
  return db.transaction(async (tx) => {
    await tx.query("SELECT pg_advisory_xact_lock(7352001)");
    await tx.query("CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())");
    const done = new Set((await tx.query<{ name: string }>("SELECT name FROM schema_migrations")).map((row) => row.name));
    const applied: string[] = [];
    for (const name of files) {
      if (done.has(name)) continue;
      const sql = await readFile(migrationsDir + name, "utf8");
      await tx.exec(sql);
      await tx.query("INSERT INTO schema_migrations (name) VALUES ($1)", [name]);
      applied.push(name);
    }
    return applied;
  });
}
