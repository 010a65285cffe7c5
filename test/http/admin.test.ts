import assert from "node:assert/strict";
import { test } from "node:test";
import { forEachDatabase } from "../support/harness.js";

forEachDatabase("admin interface: organizations, keys and projects", (h) => {
  test("an organization comes with an sk_ key shown once, and a revoked key is refused at once", async () => {
    const org = await h().admin("POST", "/admin/organizations", { name: "Acme" });
    assert.equal(org.status, 201);
    const { id, api_key } = org.json<{ id: string; name: string; api_key: string }>();
    assert.match(api_key, /^sk_[A-Za-z0-9_-]{40,}$/);
    const second = await h().admin("POST", `/admin/organizations/${id}/api-keys`);
    assert.equal(second.status, 201);
    const key = second.json<{ id: string; api_key: string }>();
    assert.equal((await h().request({ method: "POST", url: "/threads", headers: { authorization: key.api_key }, payload: {} })).status, 200);
    assert.equal((await h().admin("DELETE", `/admin/api-keys/${key.id}`)).status, 204);
    const refused = await h().request({ method: "POST", url: "/threads", headers: { authorization: key.api_key }, payload: {} });
    assert.equal(refused.status, 401);
    assert.equal((await h().request({ method: "POST", url: "/threads", headers: { authorization: api_key }, payload: {} })).status, 200);
    const stored = await h().database.db.query<{ key_hash: string }>("SELECT key_hash FROM api_keys WHERE organization_id = $1", [id]);
    assert.ok(stored.every((row) => !row.key_hash.includes(api_key) && row.key_hash.length === 64));
  });

  test("the admin interface refuses a wrong admin key and validates its input", async () => {
    const wrong = await h().request({ method: "POST", url: "/admin/organizations", headers: { authorization: "Bearer nope" }, payload: { name: "x" } });
    assert.equal(wrong.status, 401);
    const bad = await h().admin("POST", "/admin/organizations", { name: "" });
    assert.equal(bad.status, 422);
    assert.equal((await h().admin("POST", "/admin/organizations/00000000-0000-4000-8000-000000000000/api-keys")).status, 404);
    assert.equal((await h().admin("DELETE", "/admin/api-keys/00000000-0000-4000-8000-000000000000")).status, 404);
  });

  test("project configurations are immutable versions; the provider key is write-only and encrypted", async () => {
    const org = (await h().admin("POST", "/admin/organizations", { name: "Acme" })).json<{ id: string }>();
    const created = await h().admin("POST", `/admin/organizations/${org.id}/projects`, {
      name: "sales",
      config: { agent: { provider: "openai", model: "gpt-x", api_key: "upstream-secret-key", temperature: 0.3 } },
    });
    assert.equal(created.status, 201);
    const project = created.json<{ id: string; config_version_id: string }>();
    assert.equal((await h().admin("POST", `/admin/organizations/${org.id}/projects`, { name: "sales", config: {} })).status, 409);
    const published = await h().admin("PUT", `/admin/projects/${project.id}/config`, { config: { agent: { provider: "openai", model: "gpt-y" } } });
    assert.equal(published.status, 201);
    const shown = await h().admin("GET", `/admin/projects/${project.id}`);
    const view = shown.json<{ config_version_id: string; config: { agent: Record<string, unknown> }; versions: unknown[] }>();
    assert.equal(view.config_version_id, published.json<{ config_version_id: string }>().config_version_id);
    assert.equal(view.config.agent.model, "gpt-y");
    assert.equal(view.config.agent.api_key_set, true);
    assert.equal(view.versions.length, 2);
    assert.ok(!shown.body.includes("upstream-secret-key"));
    const rows = await h().database.db.query<{ config: unknown; encrypted_secrets: string }>(
      "SELECT config, encrypted_secrets FROM project_config_versions WHERE project_id = $1",
      [project.id],
    );
    assert.ok(rows.every((row) => !JSON.stringify(row).includes("upstream-secret-key")));
  });

  test("a bad configuration is a 422 at its exact location", async () => {
    const org = (await h().admin("POST", "/admin/organizations", { name: "Acme" })).json<{ id: string }>();
    const response = await h().admin("POST", `/admin/organizations/${org.id}/projects`, {
      name: "bad",
      config: { agent: { provider: "watson", temperature: 5 }, json_input: { schema: { type: "nonsense" } } },
    });
    assert.equal(response.status, 422);
    const locs = response.json<{ detail: { loc: unknown[] }[] }>().detail.map((issue) => issue.loc);
    assert.deepEqual(locs, [
      ["body", "config", "agent", "provider"],
      ["body", "config", "agent", "temperature"],
    ]);
    const schema = await h().admin("POST", `/admin/organizations/${org.id}/projects`, { name: "bad", config: { json_input: { schema: { type: "nonsense" } } } });
    assert.equal(schema.status, 422);
    assert.deepEqual(schema.json<{ detail: { loc: unknown[] }[] }>().detail[0]!.loc, ["body", "config", "json_input", "schema"]);
  });

  test("one configuration version reads back as published, for comparing versions and publishing an earlier one again", async () => {
    const org = (await h().admin("POST", "/admin/organizations", { name: "Acme" })).json<{ id: string }>();
    const project = (
      await h().admin("POST", `/admin/organizations/${org.id}/projects`, {
        name: "support",
        config: { agent: { provider: "openai", model: "gpt-x", api_key: "upstream-secret-key", greeting: "Hello from version 1" } },
      })
    ).json<{ id: string; config_version_id: string }>();
    const second = await h().admin("PUT", `/admin/projects/${project.id}/config`, { config: { agent: { provider: "openai", model: "gpt-y", greeting: "Hello from version 2" } } });
    const secondId = second.json<{ config_version_id: string }>().config_version_id;

    interface VersionView { id: string; project_id: string; version: number; created_at: string; current: boolean; config: { agent: Record<string, unknown> } }
    const first = await h().admin("GET", `/admin/projects/${project.id}/versions/${project.config_version_id}/config`);
    assert.equal(first.status, 200, first.body);
    const firstView = first.json<VersionView>();
    assert.deepEqual([firstView.id, firstView.project_id, firstView.version, firstView.current], [project.config_version_id, project.id, 1, false]);
    assert.equal(firstView.config.agent.greeting, "Hello from version 1");
    assert.equal(firstView.config.agent.api_key_set, true);
    assert.ok(!Number.isNaN(Date.parse(firstView.created_at)));
    assert.ok(!first.body.includes("upstream-secret-key"));
    const latest = (await h().admin("GET", `/admin/projects/${project.id}/versions/${secondId}/config`)).json<VersionView>();
    assert.deepEqual([latest.version, latest.current, latest.config.agent.model], [2, true, "gpt-y"]);

    // Going back: version 1's configuration published again is version 3, and the write-only key stays.
    const { api_key_set: _shownOnly, ...agent } = firstView.config.agent;
    const again = await h().admin("PUT", `/admin/projects/${project.id}/config`, { config: { agent } });
    assert.equal(again.status, 201, again.body);
    const third = (await h().admin("GET", `/admin/projects/${project.id}/versions/${again.json<{ config_version_id: string }>().config_version_id}/config`)).json<VersionView>();
    assert.deepEqual([third.version, third.current, third.config.agent.greeting, third.config.agent.api_key_set], [3, true, "Hello from version 1", true]);

    // Another project's version, an unknown one and an unknown project are the same 404s; a malformed id is a 422.
    const other = (await h().admin("POST", `/admin/organizations/${org.id}/projects`, { name: "other", config: {} })).json<{ id: string; config_version_id: string }>();
    const foreign = await h().admin("GET", `/admin/projects/${project.id}/versions/${other.config_version_id}/config`);
    assert.deepEqual([foreign.status, foreign.json()], [404, { detail: "Configuration version not found" }]);
    const unknown = await h().admin("GET", `/admin/projects/${project.id}/versions/00000000-0000-4000-8000-000000000000/config`);
    assert.deepEqual([unknown.status, unknown.json()], [404, { detail: "Configuration version not found" }]);
    const noProject = await h().admin("GET", `/admin/projects/00000000-0000-4000-8000-000000000000/versions/${secondId}/config`);
    assert.deepEqual([noProject.status, noProject.json()], [404, { detail: "Project not found" }]);
    const malformed = await h().admin("GET", `/admin/projects/${project.id}/versions/nope/config`);
    assert.equal(malformed.status, 422);
    assert.deepEqual(malformed.json<{ detail: { loc: unknown[] }[] }>().detail[0]!.loc, ["path", "version_id"]);
    const wrongKey = await h().request({ method: "GET", url: `/admin/projects/${project.id}/versions/${secondId}/config`, headers: { authorization: "Bearer nope" } });
    assert.equal(wrongKey.status, 401);

    const document = (await h().request({ method: "GET", url: "/openapi.json" })).json<{ paths: Record<string, Record<string, { responses: Record<string, unknown> }>> }>();
    const operation = document.paths["/admin/projects/{project_id}/versions/{version_id}/config"]?.["get"];
    assert.ok(operation, "the version read is in the OpenAPI document");
    assert.deepEqual(Object.keys(operation.responses).sort(), ["200", "401", "404", "422"]);
  });
});
