import { after, before, describe } from "node:test";
import type { FastifyInstance, InjectOptions } from "fastify";
import pino from "pino";
import { createApp, type App } from "../../src/app.js";
import { loadConfig, type Config } from "../../src/config.js";
import type { VoiceSettings } from "../../src/domain/calls/voice-settings.js";
import type { Db } from "../../src/domain/shared/database.js";
import { openPostgres } from "../../src/store/postgres-db.js";
import { openedDatabases, type TestDatabase } from "./databases.js";

export const adminKey = "test-admin-key-0123456789abcdef";
export const testSecrets = { JWT_SECRET: "test-jwt-secret-0123456789abcdef0123", ENCRYPTION_KEY: "test-encryption-key-0123456789abcdef" };

export interface TestResponse {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
  json<T = unknown>(): T;
}

/** How a suite's app differs from the default test app; the voice and telephony suites each have a preset (their support.ts). */
export interface HarnessOptions {
  /** Settings over the test configuration's, as environment variables. */
  env?: Record<string, string>;
  /** Voice settings over those the configuration gives (short timings for the call suites). */
  voice?: Partial<VoiceSettings>;
  /** The project configuration `organization()` creates unless given one. */
  projectConfig?: unknown;
  /** Listen on a loopback port from the start, for clients that need a real address (sockets, vendors): `wsBase`. */
  listen?: boolean;
  /** One database only. */
  only?: TestDatabase["name"];
}

export interface Harness {
  database: TestDatabase;
  app: App;
  server: FastifyInstance;
  config: Config;
  /** ws://127.0.0.1:PORT of the listening app, for a suite with `listen`. */
  wsBase: string;
  request(options: InjectOptions): Promise<TestResponse>;
  admin(method: InjectOptions["method"], url: string, payload?: unknown): Promise<TestResponse>;
  /** A new organization with a project named `projectName` (the suite's project configuration unless given); returns its id and API key. */
  organization(projectConfig?: unknown, projectName?: string): Promise<{ organizationId: string; apiKey: string; projectId: string }>;
  thread(apiKey: string, body?: Record<string, unknown>): Promise<string>;
  threadToken(apiKey: string, threadId: string): Promise<string>;
  /**
   * Another app on the same database: a second instance, or the same service after a restart. With `ownPool` (on
   * PostgreSQL) it opens its own connections, as a separate process would. Closed after the suite.
   */
  startApp(options?: { ownPool: boolean }): Promise<App>;
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

/** Requests injected into an app, answered as `TestResponse`s. */
export function injector(app: App): (options: InjectOptions) => Promise<TestResponse> {
  return async (options) => {
    const response = await app.server.inject(options);
    return { status: response.statusCode, headers: response.headers, body: response.body, json: <T>() => JSON.parse(response.body) as T };
  };
}

async function openApp(config: Config, db: Db, voice: Partial<VoiceSettings> | undefined): Promise<App> {
  const app = await createApp(config, { db, logger: pino({ level: "silent" }), ...(voice ? { voice } : {}) });
  await app.server.ready();
  return app;
}

async function makeHarness(database: TestDatabase, options: HarnessOptions, started: { apps: App[]; pools: Db[] }): Promise<Harness> {
  const config = testConfig(database, options.env);
  const app = await openApp(config, database.db, options.voice);
  const wsBase = options.listen ? (await app.server.listen({ port: 0, host: "127.0.0.1" })).replace(/^http/, "ws") : undefined;
  const request = injector(app);
  const admin = (method: InjectOptions["method"], url: string, payload?: unknown) =>
    request({ method, url, headers: { authorization: `Bearer ${adminKey}` }, ...(payload === undefined ? {} : { payload: payload as InjectOptions["payload"] }) });
  return {
    database,
    app,
    server: app.server,
    config,
    get wsBase(): string {
      if (wsBase === undefined) throw new Error("this suite's app does not listen: declare it with `listen: true`");
      return wsBase;
    },
    request,
    admin,
    async organization(projectConfig = options.projectConfig ?? {}, projectName = "support") {
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
    async threadToken(apiKey, threadId) {
      return (await request({ method: "POST", url: `/threads/${threadId}/token`, headers: { authorization: apiKey } })).json<{ access_token: string }>().access_token;
    },
    async startApp(startOptions) {
      const pool = startOptions?.ownPool && database.url ? openPostgres(database.url, 10) : undefined;
      if (pool) started.pools.push(pool);
      const another = await openApp(config, pool ?? database.db, options.voice);
      started.apps.push(another);
      return another;
    },
  };
}

/**
 * Declares the suite once per database: PGlite always, PostgreSQL when reachable (test/main.ts opens them before any
 * suite is declared). Each suite gets its own app on the shared database and isolates its data by creating its own
 * organizations.
 */
export function forEachDatabase(title: string, body: (harness: () => Harness) => void, options: HarnessOptions = {}): void {
  for (const database of openedDatabases().filter((candidate) => options.only === undefined || candidate.name === options.only)) {
    describe(`${title} [${database.name}]`, () => {
      let harness: Harness | undefined;
      const started: { apps: App[]; pools: Db[] } = { apps: [], pools: [] };
      before(async () => {
        harness = await makeHarness(database, options, started);
      });
      after(async () => {
        for (const app of started.apps) await app.close().catch(() => undefined);
        for (const pool of started.pools) await pool.close();
        await harness?.app.close();
      });
      body(() => {
        if (!harness) throw new Error("harness not ready");
        return harness;
      });
    });
  }
}
