import pg from "pg";
import type { Db } from "../../src/domain/shared/database.js";
import { migrate } from "../../src/store/migrate.js";
import { openPglite } from "../../src/store/pglite-db.js";
import { openPostgres } from "../../src/store/postgres-db.js";

/**
 * The databases every suite runs against, opened once per test process and shared: PGlite in memory always, and a
 * fresh database on the PostgreSQL at 127.0.0.1:5432 when it is reachable (required when CI is set).
 */
export interface TestDatabase {
  name: "pglite" | "postgres";
  db: Db;
  url?: string;
}

const adminUrl = process.env.TEST_POSTGRES_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
let pglite: Promise<TestDatabase> | undefined;
let postgres: Promise<TestDatabase | undefined> | undefined;
const cleanups: (() => Promise<void>)[] = [];

export function sharedPglite(): Promise<TestDatabase> {
  pglite ??= (async () => {
    const db = await openPglite(undefined);
    await migrate(db);
    cleanups.push(() => db.close());
    return { name: "pglite" as const, db };
  })();
  return pglite;
}

async function postgresReachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Creates a new database for this test process, so runs never see each other's data. */
export async function createPostgresDatabase(): Promise<string> {
  const name = `parley_test_${process.pid}_${Date.now().toString(36)}_${Math.floor(Math.random() * 1e6)}`;
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  cleanups.push(async () => {
    const dropper = new pg.Client({ connectionString: adminUrl });
    await dropper.connect();
    await dropper.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await dropper.end();
  });
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

export function sharedPostgres(): Promise<TestDatabase | undefined> {
  postgres ??= (async () => {
    if (!(await postgresReachable())) {
      if (process.env.CI) throw new Error(`PostgreSQL is not reachable at ${adminUrl}, and CI requires it`);
      return undefined;
    }
    const url = await createPostgresDatabase();
    const db = openPostgres(url, 30);
    await migrate(db);
    cleanups.unshift(() => db.close());
    return { name: "postgres" as const, db, url };
  })();
  return postgres;
}

let opened: TestDatabase[] = [];

/** Opens the shared databases; called once by test/main.ts before the suites are declared. */
export async function openDatabases(): Promise<TestDatabase[]> {
  const postgresDatabase = await sharedPostgres();
  opened = [await sharedPglite(), ...(postgresDatabase ? [postgresDatabase] : [])];
  return opened;
}

export function openedDatabases(): TestDatabase[] {
  return opened;
}

export async function closeDatabases(): Promise<void> {
  for (const cleanup of cleanups.splice(0)) await cleanup().catch(() => undefined);
}
