import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { before, test } from "node:test";
import { promisify } from "node:util";
import pino from "pino";
import { createApp } from "../../src/app.js";
import { hashCredential } from "../../src/domain/access/secrets.js";
import { openPglite } from "../../src/store/pglite-db.js";
import { adminKey, forEachDatabase, testConfig, testSecrets } from "../support/harness.js";

const run = promisify(execFile);

async function parley(env: Record<string, string>, ...args: string[]): Promise<Record<string, unknown>> {
  const { stdout } = await run(process.execPath, ["bin/parley.js", ...args], { env: { PATH: process.env.PATH ?? "", ...env } });
  return JSON.parse(stdout) as Record<string, unknown>;
}

forEachDatabase("the parley command-line tool: listings, rotation and admin key recovery", (h) => {
  let url = "";
  before(async () => {
    url = await h().server.listen({ port: 0, host: "127.0.0.1" });
  });

  test("lists organizations, projects and keys, and rotates a key", async () => {
    const env = { PARLEY_URL: url, PARLEY_ADMIN_KEY: adminKey };
    const { organizationId, apiKey, projectId } = await h().organization();
    const listed = await parley(env, "org", "list");
    assert.ok(Array.isArray(listed.organizations) && listed.organizations.length > 0);
    assert.ok("cursor" in (listed.pagination as object));
    assert.deepEqual((await parley(env, "project", "list", organizationId)).projects, [
      { id: projectId, name: "support", config_version_id: (await h().admin("GET", `/admin/projects/${projectId}`)).json<{ config_version_id: string }>().config_version_id, created_at: (await h().admin("GET", `/admin/organizations/${organizationId}/projects`)).json<{ projects: { created_at: string }[] }>().projects[0]!.created_at },
    ]);
    const keys = (await parley(env, "key", "list", organizationId)).api_keys as { id: string; display: string }[];
    assert.equal(keys.length, 1);
    assert.equal(keys[0]!.display, `sk_…${apiKey.slice(-4)}`);
    const rotated = await parley(env, "key", "rotate", keys[0]!.id);
    assert.equal(rotated.replaced_key_id, keys[0]!.id);
    assert.equal((await h().request({ method: "POST", url: "/threads", headers: { authorization: apiKey }, payload: {} })).status, 401);
    assert.equal((await h().request({ method: "POST", url: "/threads", headers: { authorization: String(rotated.api_key) }, payload: {} })).status, 200);
  });

  test("admin reset-key, run where the database is, issues a working admin key and retires the stored one", async () => {
    const databaseUrl = h().database.url;
    if (databaseUrl === undefined) {
      // The shared PGlite belongs to this process; the command opens a data folder of its own.
      const dataDir = await mkdtemp(path.join(tmpdir(), "parley-reset-"));
      try {
        const reset = await parley({ DATA_DIR: dataDir }, "admin", "reset-key");
        assert.match(String(reset.admin_key), /^adm_/);
        const db = await openPglite(dataDir);
        const [stored] = await db.query<{ value: string }>("SELECT value FROM server_settings WHERE key = 'admin_key_hash'");
        await db.close();
        assert.equal(stored?.value, hashCredential(String(reset.admin_key)));
      } finally {
        await rm(dataDir, { recursive: true, force: true });
      }
      return;
    }
    const db = h().database.db;
    const [previous] = await db.query<{ value: string }>("SELECT value FROM server_settings WHERE key = 'admin_key_hash'");
    const app = await createApp(testConfig(h().database, { ADMIN_API_KEY: "" }), { db, logger: pino({ level: "silent" }) });
    try {
      const first = await parley({ DATABASE_URL: databaseUrl, ...testSecrets }, "admin", "reset-key");
      const second = await parley({ DATABASE_URL: databaseUrl, ...testSecrets }, "admin", "reset-key");
      const list = (key: unknown) => app.server.inject({ method: "GET", url: "/admin/organizations?limit=1", headers: { authorization: `Bearer ${String(key)}` } });
      assert.equal((await list(second.admin_key)).statusCode, 200);
      assert.equal((await list(first.admin_key)).statusCode, 401);
    } finally {
      await app.close();
      if (previous) await db.query("UPDATE server_settings SET value = $1 WHERE key = 'admin_key_hash'", [previous.value]);
      else await db.query("DELETE FROM server_settings WHERE key = 'admin_key_hash'");
    }
  });

  test("admin reset-key refuses while ADMIN_API_KEY is the admin key", async () => {
    await assert.rejects(parley({ ADMIN_API_KEY: adminKey, DATA_DIR: path.join(tmpdir(), "parley-unused") }, "admin", "reset-key"), /ADMIN_API_KEY is set/);
  });
});

