import { after, before, describe } from "node:test";
import type { FastifyInstance, InjectOptions } from "fastify";
import pino from "pino";
import { createApp, type App } from "../../src/app.js";
import { loadConfig, type Config } from "../../src/config.js";
import { openedDatabases, type TestDatabase } from "./databases.js";

export const adminKey = "test-admin-key-0123456789abcdef";
export const testSecrets = { JWT_SECRET: "test-jwt-secret-0123456789abcdef0123", ENCRYPTION_KEY: "test-encryption-key-0123456789abcdef" };

export interface TestResponse {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
  json<T = unknown>(): T;
}

export interface Harness {
  database: TestDatabase;
  app: App;
  server: FastifyInstance;
  config: Config;
  request(options: InjectOptions): Promise<TestResponse>;
  admin(method: InjectOptions["method"], url: string, payload?: unknown): Promise<TestResponse>;
  /** A new organization with a project named `projectName` (config optional); returns its id and API key. */
  organization(projectConfig?: unknown, projectName?: string): Promise<{ organizationId: string; apiKey: string; projectId: string }>;
  thread(apiKey: string, body?: Record<string, unknown>): Promise<string>;
}

export function testConfig(database: TestDatabase, overrides: Record<string, string> = {}): Config {
  return loadConfig({
    ADMIN_API_KEY: adminKey,
    ...testSecrets,
    DATA_DIR: "./.tmp/test-data",
    LOG_LEVEL: "silent",
    SHUTDOWN_GRACE_MS: "500",
    // Calls exchange text unless a suite asks for real audio (test/voice-calls/audio-calls.test.ts and the browser test).
    SPEECH_MODE: "text",
    // Tool receivers in tests listen on loopback.
    TOOLS_ALLOW_PRIVATE_NETWORKS: "true",
    ...(database.url ? { DATABASE_URL: database.url } : {}),
    ...overrides,
  });
}

async function makeHarness(database: TestDatabase, overrides: Record<string, string>): Promise<Harness> {
  const config = testConfig(database, overrides);
  const app = await createApp(config, { db: database.db, logger: pino({ level: "silent" }) });
  await app.server.ready();
  const request = async (options: InjectOptions): Promise<TestResponse> => {
    const response = await app.server.inject(options);
    return { status: response.statusCode, headers: response.headers, body: response.body, json: <T>() => JSON.parse(response.body) as T };
  };
  const admin = (method: InjectOptions["method"], url: string, payload?: unknown) =>
    request({ method, url, headers: { authorization: `Bearer ${adminKey}` }, ...(payload === undefined ? {} : { payload: payload as InjectOptions["payload"] }) });
  return {
    database,
    app,
    server: app.server,
    config,
    request,
    admin,
    async organization(projectConfig = {}, projectName = "support") {
      const org = (await admin("POST", "/admin/organizations", { name: "Test org" })).json<{ id: string; api_key: string }>();
      const project = await admin("POST", `/admin/organizations/${org.id}/projects`, { name: projectName, config: projectConfig });
      if (project.status !== 201) throw new Error(`project creation failed: ${project.body}`);
      return { organizationId: org.id, apiKey: org.api_key, projectId: project.json<{ id: string }>().id };
    },
    async thread(apiKey, body = {}) {
      const response = await request({ method: "POST", url: "/threads", headers: { authorization: apiKey }, payload: body });
      if (response.status !== 200) throw new Error(`thread creation failed: ${response.body}`);
      return response.json<{ thread_id: string }>().thread_id;
    },
  };
}

/**
 * Declares the suite once per database: PGlite always, PostgreSQL when reachable (test/main.ts opens them before any
 * suite is declared). Each suite gets its own app on the shared database and isolates its data by creating its own
 * organizations.
 */
export function forEachDatabase(
  title: string,
  body: (harness: () => Harness) => void,
  overrides: Record<string, string> = {},
  only?: TestDatabase["name"],
): void {
  for (const database of openedDatabases().filter((candidate) => only === undefined || candidate.name === only)) {
    describe(`${title} [${database.name}]`, () => {
      let harness: Harness | undefined;
      before(async () => {
        harness = await makeHarness(database, overrides);
      });
      after(async () => {
        await harness?.app.close();
      });
      body(() => {
        if (!harness) throw new Error("harness not ready");
        return harness;
      });
    });
  }
}
