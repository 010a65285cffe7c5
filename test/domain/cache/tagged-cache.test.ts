import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { TaggedCache } from "../../../src/domain/cache/tagged-cache.js";

function deferred<T>(): { promise: Promise<T>; resolve(value: T): void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((settle) => (resolve = settle));
  return { promise, resolve };
}

describe("the tagged cache", () => {
  test("an entry is dropped by any of its tags and kept through the others' invalidations", async () => {
    const cache = new TaggedCache<string>(100, 60_000, () => 1, () => true);
    await cache.load("page", ["thread:a", "organization:o"], async () => "v1");
    cache.invalidate("thread:b");
    assert.equal(cache.get("page"), "v1");
    cache.invalidate("organization:o");
    assert.equal(cache.get("page"), undefined);
  });

  test("a read overlapping an invalidation of its tags is returned but not kept", async () => {
    const cache = new TaggedCache<string>(100, 60_000, () => 1, () => true);
    const read = deferred<string>();
    const loading = cache.load("page", ["thread:a"], () => read.promise);
    cache.invalidate("thread:a");
    read.resolve("from before the write");
    assert.equal(await loading, "from before the write");
    assert.equal(cache.get("page"), undefined);
  });

  test("a read tagged with a whole kind is spoilt by an invalidation of any tag of that kind", async () => {
    const cache = new TaggedCache<string>(100, 60_000, () => 1, () => true);
    const read = deferred<string>();
    const loading = cache.load("hash", ["api_key:*"], () => read.promise, () => ["api_key:k1"]);
    cache.invalidate("api_key:k2");
    read.resolve("key");
    await loading;
    assert.equal(cache.get("hash"), undefined);
    await cache.load("hash", ["api_key:*"], async () => "key", () => ["api_key:k1"]);
    cache.invalidate("api_key:k1");
    assert.equal(cache.get("hash"), undefined);
  });

  test("its size stays within the bound, and entries read since they were stored outlive those that were not", async () => {
    const cache = new TaggedCache<string>(3, 60_000, () => 1, () => true);
    for (const key of ["a", "b", "c"]) await cache.load(key, [`thread:${key}`], async () => key);
    cache.get("a");
    await cache.load("d", ["thread:d"], async () => "d");
    assert.equal(cache.size, 3);
    assert.deepEqual(["a", "b", "c", "d"].map((key) => cache.get(key) !== undefined), [true, false, true, true]);
    await cache.load("too big", ["thread:x"], async () => "x".repeat(10));
    assert.equal(cache.size, 3);
  });

  test("it holds nothing when its size is 0, and serves nothing while it is not usable", async () => {
    const off = new TaggedCache<string>(0, 60_000, () => 1, () => true);
    await off.load("page", ["thread:a"], async () => "v");
    assert.equal(off.get("page"), undefined);
    let usable = true;
    const cache = new TaggedCache<string>(10, 60_000, () => 1, () => usable);
    await cache.load("page", ["thread:a"], async () => "v1");
    usable = false;
    assert.equal(cache.get("page"), undefined);
    assert.equal(await cache.load("page", ["thread:a"], async () => "v2"), "v2");
    usable = true;
    assert.equal(cache.get("page"), "v1", "clearing on a gap is the owner's job (Invalidations)");
  });

  test("an entry older than the maximum age is not served, and the next load reads again", async () => {
    const cache = new TaggedCache<string>(10, 20, () => 1, () => true);
    await cache.load("page", ["thread:a"], async () => "v1");
    assert.equal(cache.get("page"), "v1");
    await new Promise((resolve) => setTimeout(resolve, 40));
    assert.equal(cache.get("page"), undefined);
    assert.equal(await cache.load("page", ["thread:a"], async () => "v2"), "v2");
    assert.equal(cache.count, 1);
  });
});
