import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { uuidv4, uuidv7 } from "../../../src/domain/shared/ids.js";

describe("message ids", () => {
  test("are distinct UUIDv7s, across refills of the random pool, with the time in front", () => {
    const ids = Array.from({ length: 2_000 }, (_, i) => uuidv7(1_700_000_000_000 + i));
    assert.equal(new Set(ids).size, ids.length);
    for (const id of ids) assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    assert.deepEqual([...ids].sort(), ids, "later times sort later");
    assert.equal(ids[0]!.slice(0, 13).replace("-", ""), (1_700_000_000_000).toString(16).padStart(12, "0"));
  });

  test("made in one millisecond, they sort in the order they were made", () => {
    const ids = Array.from({ length: 2_000 }, () => uuidv7(1_700_000_000_123));
    assert.equal(new Set(ids).size, ids.length);
    assert.deepEqual([...ids].sort(), ids);
  });

  test("random ones are distinct UUIDv4s, across refills of the random pool, interleaved with UUIDv7s", () => {
    const ids = Array.from({ length: 2_000 }, (_, i) => (i % 3 === 0 ? uuidv7() : uuidv4()));
    assert.equal(new Set(ids).size, ids.length);
    for (const [i, id] of ids.entries()) {
      assert.match(id, i % 3 === 0 ? /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/ : /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    }
  });
});
