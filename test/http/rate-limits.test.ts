import assert from "node:assert/strict";
import { test } from "node:test";
import pino from "pino";
import { createApp, type App } from "../../src/app.js";
import { forEachDatabase, testConfig, type Harness } from "../support/harness.js";

const limits = { RATE_LIMIT_PER_KEY_PER_MINUTE: "3", RATE_LIMIT_PER_ORG_PER_MINUTE: "5" };

async function read(app: App, apiKey: string): Promise<{ status: number; retryAfter: unknown; body: string }> {
  const response = await app.server.inject({ method: "GET", url: "/threads/none", headers: { authorization: apiKey } });
  return { status: response.statusCode, retryAfter: response.headers["retry-after"], body: response.body };
}

async function secondKey(h: Harness, organizationId: string): Promise<string> {
  return (await h.admin("POST", `/admin/organizations/${organizationId}/api-keys`)).json<{ api_key: string }>().api_key;
}

/** Two instances of the service on the same database (and Redis, when given): limits must be shared. */
async function twoInstances(h: Harness, extra: Record<string, string>): Promise<[App, App]> {
  const config = testConfig(h.database, { ...limits, ...extra });
  const make = () => createApp(config, { db: h.database.db, logger: pino({ level: "silent" }) });
  return Promise.all([make(), make()]);
}

for (const backend of ["database or process", "redis"] as const) {
  const extra: Record<string, string> = backend === "redis" ? { REDIS_URL: "redis://127.0.0.1:6379" } : {};
  forEachDatabase(`rate limits (${backend})`, (h) => {
    test("a key over its limit gets 429 with Retry-After, and the organization limit spans its keys", async () => {
      const { apiKey, organizationId } = await h().organization();
      const other = await secondKey(h(), organizationId);
      const statuses: number[] = [];
      for (let i = 0; i < 4; i += 1) statuses.push((await read(h().app, apiKey)).status);
      assert.deepEqual(statuses, [404, 404, 404, 429]);
      const limited = await read(h().app, apiKey);
      assert.equal(limited.status, 429);
      assert.deepEqual(JSON.parse(limited.body), { detail: "Rate limit exceeded for this credential" });
      const retryAfter = Number(limited.retryAfter);
      assert.ok(retryAfter >= 1 && retryAfter <= 60, String(limited.retryAfter));
      assert.equal((await read(h().app, other)).status, 429, "the organization's 5 are spent: 5 counted, the 6th refused");
    });

    test("limits hold across instances sharing the database or Redis", async () => {
      const [first, second] = await twoInstances(h(), extra);
      try {
        const { apiKey } = await h().organization();
          const statuses = [
          (await read(first, apiKey)).status,
          (await read(second, apiKey)).status,
          (await read(first, apiKey)).status,
          (await read(second, apiKey)).status,
        ];
        if (h().database.name === "pglite" && backend !== "redis") {
          assert.deepEqual(statuses, [404, 404, 404, 404], "PGlite is one process: each instance counts alone");
        } else {
          assert.deepEqual(statuses, [404, 404, 404, 429]);
        }
      } finally {
        await first.close();
        await second.close();
      }
    });
  }, { env: { ...limits, ...extra } });
}
