import assert from "node:assert/strict";
import { test } from "node:test";
import { forEachDatabase } from "../../support/harness.js";
import { acmeAgent } from "../../support/fixtures.js";
import { accountId } from "../../voice-calls/support.js";

const twilioToken = "twilio-auth-token-0123456789abcdef";
const retellKey = "key_retell_0123456789abcdef012345";
const accounts = [{ id: accountId, phone_numbers: ["+14155550100"] }];

forEachDatabase("voice vendor configuration", (harness) => {
  test("vendor credentials are write-only: shown as set, kept across versions, encrypted at rest", async () => {
    const h = harness();
    const { projectId } = await h.organization({
      agent: acmeAgent,
      voice: { provider: "twilio", accounts, twilio: { account_sid: `AC${"a".repeat(32)}`, auth_token: twilioToken }, retell: { api_key: retellKey, agent_id: "agent_1" } },
    });
    const view = (await h.admin("GET", `/admin/projects/${projectId}`)).json<{ config: { voice: Record<string, Record<string, unknown>> } }>();
    assert.deepEqual(view.config.voice["twilio"], { account_sid: `AC${"a".repeat(32)}`, api_base_url: "https://api.twilio.com", auth_token_set: true });
    assert.deepEqual(view.config.voice["retell"], { agent_id: "agent_1", api_base_url: "https://api.retellai.com", api_key_set: true });
    assert.ok(!JSON.stringify(view).includes(twilioToken) && !JSON.stringify(view).includes(retellKey));

    const published = await h.admin("PUT", `/admin/projects/${projectId}/config`, {
      config: { agent: acmeAgent, voice: { provider: "retell", accounts, retell: { agent_id: "agent_2" } } },
    });
    assert.equal(published.status, 201, published.body);
    const next = (await h.admin("GET", `/admin/projects/${projectId}`)).json<{ config: { voice: Record<string, Record<string, unknown>> } }>();
    assert.equal(next.config.voice["retell"]?.["api_key_set"], true, "a version that leaves the key out keeps it");
    assert.equal(next.config.voice["retell"]?.["agent_id"], "agent_2");

    const rows = await h.database.db.query<{ config: unknown; encrypted_secrets: string | null }>("SELECT config, encrypted_secrets FROM project_config_versions WHERE project_id = $1", [projectId]);
    for (const row of rows) {
      const stored = JSON.stringify(row);
      assert.ok(!stored.includes(twilioToken) && !stored.includes(retellKey), "no credential in clear in the database");
      assert.ok(row.encrypted_secrets);
    }
  });

  test("a vendor provider without its account settings is a 422 at the missing setting", async () => {
    const h = harness();
    const org = (await h.admin("POST", "/admin/organizations", { name: "Vendorless" })).json<{ id: string }>();
    const cases: [unknown, (string | number)[]][] = [
      [{ voice: { provider: "retell", retell: { api_key: retellKey } } }, ["body", "config", "voice", "retell", "agent_id"]],
      [{ voice: { provider: "retell", retell: { agent_id: "agent_1" } } }, ["body", "config", "voice", "retell", "api_key"]],
      [{ voice: { provider: "twilio", twilio: { auth_token: twilioToken } } }, ["body", "config", "voice", "twilio", "account_sid"]],
      [{ voice: { provider: "twilio", twilio: { account_sid: `AC${"b".repeat(32)}` } } }, ["body", "config", "voice", "twilio", "auth_token"]],
    ];
    for (const [config, loc] of cases) {
      const response = await h.admin("POST", `/admin/organizations/${org.id}/projects`, { name: "p", config });
      assert.equal(response.status, 422, response.body);
      assert.deepEqual(response.json<{ detail: { loc: unknown }[] }>().detail[0]?.loc, loc);
    }
  });

  test("without PUBLIC_BASE_URL a vendor provider's call is a 422 at project_id that says so", async () => {
    const h = harness();
    const { apiKey, projectId } = await h.organization({
      agent: acmeAgent,
      voice: { provider: "retell", accounts, retell: { api_key: retellKey, agent_id: "agent_1", api_base_url: "http://127.0.0.1:9" } },
    });
    const threadId = await h.thread(apiKey);
    for (const [url, payload] of [
      [`/voice/${threadId}/phone-call`, { callee: "+14155552671", project_id: projectId }],
      [`/voice/${threadId}/web-call`, { project_id: projectId }],
    ] as const) {
      const response = await h.request({ method: "POST", url, headers: { authorization: apiKey }, payload });
      assert.equal(response.status, 422, response.body);
      const [issue] = response.json<{ detail: { loc: unknown; msg: string; input: unknown }[] }>().detail;
      assert.deepEqual(issue?.loc, ["body", "project_id"]);
      assert.match(issue?.msg ?? "", /PUBLIC_BASE_URL/);
      assert.equal(issue?.input, projectId);
    }
    const calls = (await h.request({ method: "GET", url: `/calls?thread_id=${threadId}`, headers: { authorization: apiKey } })).json<{ calls: unknown[] }>();
    assert.deepEqual(calls.calls, [], "nothing was created");
  });
  test("voice.inbound is stored with each version and checked at its place", async () => {
    const h = harness();
    const inbound = { enabled: true, greeting: "Acme clinic, how can I help?", max_call_seconds: 300 };
    const { projectId } = await h.organization({ agent: acmeAgent, voice: { accounts, inbound } });
    const view = async () => (await h.admin("GET", `/admin/projects/${projectId}`)).json<{ config: { voice: { inbound: unknown } } }>().config.voice.inbound;
    assert.deepEqual(await view(), inbound);
    const off = await h.admin("PUT", `/admin/projects/${projectId}/config`, { config: { agent: acmeAgent, voice: { accounts } } });
    assert.equal(off.status, 201, off.body);
    assert.deepEqual(await view(), { enabled: false }, "a version without voice.inbound answers no calls");
    const versions = await h.database.db.query<{ config: { voice: { inbound?: unknown } } }>(
      "SELECT config FROM project_config_versions WHERE project_id = $1 ORDER BY created_at",
      [projectId],
    );
    assert.deepEqual(versions.map((version) => version.config.voice.inbound), [inbound, { enabled: false }]);

    const org = (await h.admin("POST", "/admin/organizations", { name: "Inbound checks" })).json<{ id: string }>();
    const at = (...path: string[]) => ["body", "config", "voice", "inbound", ...path];
    const cases: [unknown, (string | number)[]][] = [
      [{ voice: { accounts, inbound: {} } }, at("enabled")],
      [{ voice: { accounts, inbound: { enabled: "maybe" } } }, at("enabled")],
      [{ voice: { accounts, inbound: { enabled: true, greeting: "" } } }, at("greeting")],
      [{ voice: { accounts, inbound: { enabled: true, max_call_seconds: 0 } } }, at("max_call_seconds")],
      [{ voice: { accounts, inbound: { enabled: true, max_call_seconds: 14_401 } } }, at("max_call_seconds")],
      [{ voice: { inbound: { enabled: true } } }, at("enabled")],
    ];
    for (const [config, loc] of cases) {
      const response = await h.admin("POST", `/admin/organizations/${org.id}/projects`, { name: "p", config });
      assert.equal(response.status, 422, `${JSON.stringify(config)}: ${response.body}`);
      assert.deepEqual(response.json<{ detail: { loc: unknown }[] }>().detail[0]?.loc, loc, response.body);
    }
    const disabledWithoutNumbers = await h.admin("POST", `/admin/organizations/${org.id}/projects`, { name: "quiet", config: { voice: { inbound: { enabled: false } } } });
    assert.equal(disabledWithoutNumbers.status, 201, disabledWithoutNumbers.body);
  });
});
