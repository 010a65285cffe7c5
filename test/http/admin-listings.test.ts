import assert from "node:assert/strict";
import { test } from "node:test";
import { resetAdminKey } from "../../src/domain/access/admin-key-reset.js";
import { AdminStore } from "../../src/store/admin-store.js";
import { forEachDatabase } from "../support/harness.js";

interface KeyItem {
  id: string;
  display: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

forEachDatabase("admin interface: listings, key rotation and recovery", (h) => {
  test("organizations are listed oldest first in keyset pages that together hold each exactly once", async () => {
    const created: string[] = [];
    for (let i = 0; i < 3; i += 1) created.push((await h().admin("POST", "/admin/organizations", { name: `Listed ${i}` })).json<{ id: string }>().id);
    const seen: { id: string; name: string; created_at: string }[] = [];
    let cursor: string | null = null;
    do {
      const response = await h().admin("GET", `/admin/organizations?limit=100${cursor ? `&cursor=${cursor}` : ""}`);
      assert.equal(response.status, 200);
      const body = response.json<{ organizations: typeof seen; pagination: { cursor: string | null } }>();
      assert.ok(body.organizations.length <= 100);
      seen.push(...body.organizations);
      cursor = body.pagination.cursor;
    } while (cursor !== null);
    assert.equal(new Set(seen.map((org) => org.id)).size, seen.length);
    assert.deepEqual(seen.filter((org) => created.includes(org.id)).map((org) => org.name), ["Listed 0", "Listed 1", "Listed 2"]);
    assert.ok(seen.every((org) => !Number.isNaN(Date.parse(org.created_at))));
    const one = (await h().admin("GET", "/admin/organizations?limit=1")).json<{ organizations: typeof seen; pagination: { cursor: string } }>();
    const next = (await h().admin("GET", `/admin/organizations?limit=1&cursor=${one.pagination.cursor}`)).json<{ organizations: typeof seen }>();
    assert.deepEqual([one.organizations[0]!.id, next.organizations[0]!.id], seen.slice(0, 2).map((org) => org.id));
  });

  test("an organization's projects and keys are listed; a key shows its redacted form and dates, never the key", async () => {
    const { organizationId, apiKey, projectId } = await h().organization({}, "sales");
    await h().thread(apiKey);
    const second = (await h().admin("POST", `/admin/organizations/${organizationId}/api-keys`)).json<{ id: string; api_key: string }>();
    assert.equal((await h().admin("DELETE", `/admin/api-keys/${second.id}`)).status, 204);

    const projects = await h().admin("GET", `/admin/organizations/${organizationId}/projects`);
    assert.deepEqual(
      projects.json<{ projects: { id: string; name: string }[] }>().projects.map(({ id, name }) => ({ id, name })),
      [{ id: projectId, name: "sales" }],
    );
    const listed = await h().admin("GET", `/admin/organizations/${organizationId}/api-keys`);
    assert.equal(listed.status, 200);
    assert.ok(!listed.body.includes(apiKey) && !listed.body.includes(second.api_key), "no key in the listing");
    const keys = listed.json<{ api_keys: KeyItem[]; pagination: { cursor: null } }>().api_keys;
    assert.deepEqual(keys.map((key) => Object.keys(key).sort()), [
      ["created_at", "display", "id", "last_used_at", "revoked_at"],
      ["created_at", "display", "id", "last_used_at", "revoked_at"],
    ]);
    const [first, revoked] = keys;
    assert.equal(first!.display, `sk_…${apiKey.slice(-4)}`);
    assert.notEqual(first!.last_used_at, null, "the first key was used to create a thread");
    assert.equal(first!.revoked_at, null);
    assert.equal(revoked!.id, second.id);
    assert.notEqual(revoked!.revoked_at, null);
    assert.equal(revoked!.last_used_at, null);
  });

  test("rotating a key shows the new key once and revokes the old one at once", async () => {
    const { organizationId, apiKey } = await h().organization();
    const keyId = (await h().admin("GET", `/admin/organizations/${organizationId}/api-keys`)).json<{ api_keys: KeyItem[] }>().api_keys[0]!.id;
    const rotated = await h().admin("POST", `/admin/api-keys/${keyId}/rotate`);
    assert.equal(rotated.status, 201);
    const fresh = rotated.json<{ id: string; api_key: string; replaced_key_id: string }>();
    assert.match(fresh.api_key, /^sk_/);
    assert.equal(fresh.replaced_key_id, keyId);
    assert.equal((await h().request({ method: "POST", url: "/threads", headers: { authorization: apiKey }, payload: {} })).status, 401);
    assert.equal((await h().request({ method: "POST", url: "/threads", headers: { authorization: fresh.api_key }, payload: {} })).status, 200);
    const again = await h().admin("POST", `/admin/api-keys/${keyId}/rotate`);
    assert.deepEqual([again.status, again.json()], [409, { detail: "API key has already been revoked" }]);
    const missing = await h().admin("POST", "/admin/api-keys/00000000-0000-4000-8000-000000000000/rotate");
    assert.deepEqual([missing.status, missing.json()], [404, { detail: "API key not found" }]);
  });

  test("listings validate their input in FastAPI's shape and need the admin key", async () => {
    const badLimit = await h().admin("GET", "/admin/organizations?limit=0");
    assert.equal(badLimit.status, 422);
    assert.equal(badLimit.json<{ detail: { type: string }[] }>().detail[0]!.type, "greater_than_equal");
    const badCursor = await h().admin("GET", "/admin/organizations?cursor=bm90LWEtdXVpZA");
    assert.deepEqual(badCursor.json(), {
      detail: [{ type: "value_error", loc: ["query", "cursor"], msg: "Value error, Invalid cursor", input: "bm90LWEtdXVpZA", ctx: { error: {} } }],
    });
    assert.equal((await h().admin("GET", "/admin/organizations/not-a-uuid/api-keys")).status, 422);
    assert.deepEqual((await h().admin("GET", "/admin/organizations/00000000-0000-4000-8000-000000000000/projects")).json(), { detail: "Organization not found" });
    const { apiKey } = await h().organization();
    assert.equal((await h().request({ method: "GET", url: "/admin/organizations", headers: { authorization: apiKey } })).status, 401);
  });

  test("a reset admin key is stored as a hash and replaces the previous stored key", async () => {
    const store = new AdminStore(h().database.db);
    const before = await h().database.db.query<{ value: string }>("SELECT value FROM server_settings WHERE key = 'admin_key_hash'");
    try {
      const first = await resetAdminKey(store);
      const second = await resetAdminKey(store);
      assert.match(second, /^adm_/);
      const [stored] = await h().database.db.query<{ value: string }>("SELECT value FROM server_settings WHERE key = 'admin_key_hash'");
      assert.equal(stored!.value.length, 64);
      assert.ok(!stored!.value.includes(first) && !stored!.value.includes(second));
    } finally {
      if (before[0]) await store.putSetting("admin_key_hash", before[0].value);
      else await h().database.db.query("DELETE FROM server_settings WHERE key = 'admin_key_hash'");
    }
  });
});
