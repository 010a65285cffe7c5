import assert from "node:assert/strict";
import { test } from "node:test";
import { forEachDatabase } from "../support/harness.js";

forEachDatabase("statements with parameters", (h) => {
  const typed = "SELECT $1::int8 AS big, $2::jsonb AS doc, $3::text AS label, NULL::int AS nothing, $4::boolean AS flag";
  const other = "SELECT $1::text || '!' AS shout";

  test("read the same on every execution, on every pooled connection, each statement with its own columns", async () => {
    const { db } = h().database;
    const runs = await Promise.all(
      Array.from({ length: 40 }, async (_, index) => ({
        typed: await db.query(typed, [String(2 ** 40 + index), JSON.stringify({ index, list: [1, "two"] }), `row ${index}`, index % 2 === 0]),
        other: await db.query(other, [`call ${index}`]),
      })),
    );
    runs.forEach((run, index) => {
      assert.deepEqual(run.typed, [{ big: 2 ** 40 + index, doc: { index, list: [1, "two"] }, label: `row ${index}`, nothing: null, flag: index % 2 === 0 }]);
      assert.deepEqual(run.other, [{ shout: `call ${index}!` }]);
    });
  });

  test("a failing one is reported, and the statements after it still run", async () => {
    const { db } = h().database;
    await assert.rejects(db.query("SELECT 1 / $1::int AS ratio", [0]), /division by zero/);
    assert.deepEqual(await db.query("SELECT 1 / $1::int AS ratio", [1]), [{ ratio: 1 }]);
    assert.deepEqual(await db.query(other, ["again"]), [{ shout: "again!" }]);
  });

  test("a parameter that cannot be sent fails its statement alone", async () => {
    const { db } = h().database;
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    for (let attempt = 0; attempt < 12; attempt++) {
      await assert.rejects(db.query("SELECT $1::jsonb AS doc", [circular]));
      await assert.rejects(db.queryCommittingLater("SELECT $1::jsonb AS doc", [circular]));
    }
    assert.deepEqual(await db.query("SELECT $1::jsonb AS doc", [JSON.stringify({ fine: true })]), [{ doc: { fine: true } }]);
    assert.deepEqual((await db.queryCommittingLater("SELECT $1::jsonb AS doc", [JSON.stringify({ fine: 1 })])).rows, [{ doc: { fine: 1 } }]);
  });

  test("one committing later gives its rows and commits, again and again on the same connections", async () => {
    const { db } = h().database;
    await db.exec("CREATE TABLE IF NOT EXISTS statement_probe (id integer PRIMARY KEY, n integer NOT NULL)");
    await db.query("INSERT INTO statement_probe VALUES ($1, 0) ON CONFLICT (id) DO UPDATE SET n = 0", [1]);
    for (let turn = 1; turn <= 12; turn++) {
      const { rows, committed } = await db.queryCommittingLater("UPDATE statement_probe SET n = n + 1 WHERE id = $1 RETURNING n, $2::jsonb AS doc", [1, JSON.stringify({ turn })]);
      assert.deepEqual(rows, [{ n: turn, doc: { turn } }]);
      await committed;
    }
    assert.deepEqual(await db.query("SELECT n FROM statement_probe WHERE id = $1", [1]), [{ n: 12 }]);
  });
});
