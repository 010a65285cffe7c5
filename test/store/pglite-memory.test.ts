import assert from "node:assert/strict";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, test } from "node:test";
import { openPglite } from "../../src/store/pglite-db.js";

async function memorySettings(dataDir: string | undefined): Promise<Record<string, string>> {
  const db = await openPglite(dataDir);
  try {
    const rows = await db.query<{ name: string; value: string }>(
      "SELECT name, current_setting(name) AS value FROM unnest(ARRAY['shared_buffers', 'wal_buffers', 'work_mem']) AS name",
    );
    return Object.fromEntries(rows.map((row) => [row.name, row.value]));
  } finally {
    await db.close();
  }
}

describe("the embedded database's memory settings", async () => {
  const root = await mkdtemp(path.join(tmpdir(), "parley-pglite-memory-"));
  after(() => rm(root, { recursive: true, force: true }));
  const tuned = { shared_buffers: "16MB", wal_buffers: "1MB", work_mem: "4MB" };

  test("PostgreSQL runs with the smaller buffers, in memory and in a new data folder", async () => {
    assert.deepEqual(await memorySettings(undefined), tuned);
    assert.deepEqual(await memorySettings(path.join(root, "data")), tuned);
  });

  test("a data folder opened again keeps its data and the same settings", async () => {
    const dataDir = path.join(root, "reopened");
    const first = await openPglite(dataDir);
    await first.exec("CREATE TABLE kept (value text); INSERT INTO kept VALUES ('still here')");
    await first.close();
    const second = await openPglite(dataDir);
    try {
      assert.deepEqual(await second.query("SELECT value FROM kept"), [{ value: "still here" }]);
    } finally {
      await second.close();
    }
    assert.deepEqual(await memorySettings(dataDir), tuned);
  });
});
