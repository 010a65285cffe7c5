import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import { adminKey, forEachDatabase } from "../support/harness.js";

const run = promisify(execFile);

forEachDatabase("the parley command-line tool", (h) => {
  let url = "";
  let dir = "";
  before(async () => {
    url = await h().server.listen({ port: 0, host: "127.0.0.1" });
    dir = await mkdtemp(path.join(tmpdir(), "parley-cli-"));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function parley(...args: string[]): Promise<Record<string, unknown>> {
    const { stdout } = await run(process.execPath, ["bin/parley.js", ...args], { env: { ...process.env, PARLEY_URL: url, PARLEY_ADMIN_KEY: adminKey } });
    return JSON.parse(stdout) as Record<string, unknown>;
  }

  test("creates an organization, keys and projects, publishes a version, shows it and revokes a key", async () => {
    const org = await parley("org", "create", "CLI", "Org");
    assert.equal(org.name, "CLI Org");
    const key = await parley("key", "create", String(org.id));
    assert.match(String(key.api_key), /^sk_/);
    const configFile = path.join(dir, "config.json");
    await writeFile(configFile, JSON.stringify({ agent: { greeting: "Hi from the CLI" } }));
    const project = await parley("project", "create", String(org.id), "cli-project", configFile);
    await writeFile(configFile, JSON.stringify({ agent: { greeting: "Second version" } }));
    const version = await parley("project", "publish", String(project.id), configFile);
    const shown = await parley("project", "show", String(project.id));
    assert.equal(shown.config_version_id, version.config_version_id);
    assert.equal((shown.config as { agent: { greeting: string } }).agent.greeting, "Second version");
    await parley("key", "revoke", String(key.id));
    const refused = await fetch(`${url}/threads`, { method: "POST", headers: { authorization: String(key.api_key), "content-type": "application/json" }, body: "{}" });
    assert.equal(refused.status, 401);
  });

  test("a failing command exits non-zero with the server's answer", async () => {
    await assert.rejects(parley("project", "show", "00000000-0000-4000-8000-000000000000"), /404/);
    await assert.rejects(parley("unknown"), /parley serve/);
  });
});
