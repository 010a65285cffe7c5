import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import type { Db } from "../../src/domain/shared/database.js";
import { applyFunctions, migrate } from "../../src/store/migrate.js";
import { openPostgres } from "../../src/store/postgres-db.js";
import { createPostgresDatabase, openedDatabases } from "../support/databases.js";

const functionsDir = fileURLToPath(new URL("../../src/store/functions/", import.meta.url));
const migrationsDir = fileURLToPath(new URL("../../src/store/migrations/", import.meta.url));

/** What a function file puts between its `$$` quotes: the body PostgreSQL keeps as `prosrc`. */
function bodyOf(sql: string): string {
  const start = sql.indexOf("$$") + 2;
  return sql.slice(start, sql.lastIndexOf("$$"));
}

class Rollback extends Error {}

/** Runs `work` in a transaction that is rolled back, so that the shared database keeps none of it. */
async function inRolledBack(db: Db, work: Parameters<Db["transaction"]>[0]): Promise<void> {
  await assert.rejects(
    db.transaction(async (tx) => {
      await work(tx);
      throw new Rollback();
    }),
    Rollback,
  );
}

for (const database of openedDatabases()) {
  describe(`SQL functions [${database.name}]`, () => {
    test("every function runs the body of its file in src/store/functions, and its hash is recorded", async () => {
      const files = (await readdir(functionsDir)).filter((file) => file.endsWith(".sql"));
      assert.ok(files.length > 0);
      for (const file of files) {
        const sql = await readFile(functionsDir + file, "utf8");
        const name = path.basename(file, ".sql");
        const [proc] = await database.db.query<{ prosrc: string }>("SELECT prosrc FROM pg_proc WHERE proname = $1", [name]);
        assert.equal(proc?.prosrc, bodyOf(sql), `${name} is the body of ${file}`);
        const [recorded] = await database.db.query<{ sha256: string }>("SELECT sha256 FROM schema_functions WHERE name = $1", [file]);
        assert.equal(recorded?.sha256, createHash("sha256").update(sql).digest("hex"));
      }
    });

    test("a function file is applied again when its content changes, and only then", async () => {
      const dir = `${await mkdtemp(path.join(tmpdir(), "parley-functions-"))}/`;
      try {
        await inRolledBack(database.db, async (tx) => {
          const file = "parley_test_answer.sql";
          const define = (answer: number) => `CREATE OR REPLACE FUNCTION parley_test_answer() RETURNS integer LANGUAGE sql AS $$ SELECT ${answer} $$;\n`;
          const answer = async () => (await tx.query<{ answer: number }>("SELECT parley_test_answer() AS answer"))[0]?.answer;
          await writeFile(dir + file, define(1));
          assert.deepEqual(await applyFunctions(tx, dir), [file]);
          assert.equal(await answer(), 1);
          // Changed by hand: an unchanged file is not applied again, so the hand-made body stays.
          await tx.exec(define(3));
          assert.deepEqual(await applyFunctions(tx, dir), []);
          assert.equal(await answer(), 3);
          await writeFile(dir + file, define(2));
          assert.deepEqual(await applyFunctions(tx, dir), [file]);
          assert.equal(await answer(), 2);
        });
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });
  });
}

describe("migrations on a new PostgreSQL database", () => {
  const postgres = openedDatabases().some((database) => database.name === "postgres");
  const skip = postgres ? false : "PostgreSQL is not reachable";

  test("two instances migrating at once apply each migration and each function once", { skip }, async () => {
    const url = await createPostgresDatabase();
    const [first, second] = [openPostgres(url, 2), openPostgres(url, 2)];
    try {
      const [a, b] = await Promise.all([migrate(first), migrate(second)]);
      const migrations = (await readdir(migrationsDir)).filter((file) => file.endsWith(".sql")).sort();
      const functions = (await readdir(functionsDir)).filter((file) => file.endsWith(".sql")).sort();
      assert.deepEqual([...a, ...b].sort(), [...migrations, ...functions].sort(), "between them, everything was applied once");
      assert.ok(a.length === 0 || b.length === 0, "the instance that waited for the lock found nothing left to do");
      const recorded = await first.query<{ name: string }>("SELECT name FROM schema_migrations ORDER BY name");
      assert.deepEqual(recorded.map((row) => row.name), migrations);
    } finally {
      await Promise.all([first.close(), second.close()]);
    }
  });

  test("a database that applied a migration under its former name does not apply it again", { skip }, async () => {
    const url = await createPostgresDatabase();
    const db = openPostgres(url, 2);
    try {
      await migrate(db, "007_rate_limits.sql");
      await db.transaction(async (tx) => {
        await tx.exec(await readFile(migrationsDir + "007a_thread_listing.sql", "utf8"));
        await tx.query("INSERT INTO schema_migrations (name) VALUES ('007_thread_listing.sql')");
      });
      const applied = await migrate(db);
      assert.ok(!applied.includes("007a_thread_listing.sql"), "its index exists already, so applying it again would fail");
      const names = (await db.query<{ name: string }>("SELECT name FROM schema_migrations")).map((row) => row.name);
      assert.ok(names.includes("007a_thread_listing.sql") && !names.includes("007_thread_listing.sql"));
    } finally {
      await db.close();
    }
  });
});
