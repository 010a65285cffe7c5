import { after, before, describe } from "node:test";
import pino from "pino";
import { createApp, type App } from "../../../src/app.js";
import { openPostgres } from "../../../src/store/postgres-db.js";
import type { Db } from "../../../src/domain/shared/database.js";
import { openedDatabases, type TestDatabase } from "../../support/databases.js";
import { adminKey, testConfig, type TestResponse } from "../../support/harness.js";
import { injector, listen, testVoiceSettings } from "../../voice-calls/support.js";
import type { InjectOptions } from "fastify";

/** The address vendors are told to reach Parley at; tests reach it directly on loopback instead. */
export const publicBaseUrl = "https://parley.example.test";

export interface TelephonyHarness {
  database: TestDatabase;
  app: App;
  /** ws://127.0.0.1:PORT of the listening app. */
  wsBase: string;
  request(options: InjectOptions): Promise<TestResponse>;
  organization(projectConfig: unknown): Promise<{ organizationId: string; apiKey: string; projectId: string }>;
  thread(apiKey: string): Promise<string>;
  /**
   * Another instance of the service on the same database, not listening: one a vendor's callback may reach while
   * the first holds the call's socket. On PostgreSQL it has its own connections, as a separate process would.
   */
  startApp(): Promise<App>;
}

/** A voice harness whose app has PUBLIC_BASE_URL set and listens on a loopback port, as vendors need. */
export function forEachTelephonyDatabase(title: string, body: (harness: () => TelephonyHarness) => void, overrides: Record<string, string> = {}): void {
  for (const database of openedDatabases()) {
    describe(`${title} [${database.name}]`, () => {
      let harness: TelephonyHarness | undefined;
      const extra: App[] = [];
      const pools: Db[] = [];
      const openApp = async (db: Db) => {
        const app = await createApp(testConfig(database, { PUBLIC_BASE_URL: publicBaseUrl, ...overrides }), {
          db,
          logger: pino({ level: "silent" }),
          voice: { ...testVoiceSettings, vendorTimeoutMs: 1500, vendorSocketGraceMs: 1000, recordWaitMs: 5000 },
        });
        await app.server.ready();
        return app;
      };
      before(async () => {
        const app = await openApp(database.db);
        const wsBase = await listen(app);
        const request = injector(app);
        const admin = (method: InjectOptions["method"], url: string, payload?: unknown) =>
          request({ method, url, headers: { authorization: `Bearer ${adminKey}` }, ...(payload === undefined ? {} : { payload: payload as InjectOptions["payload"] }) });
        harness = {
          database,
          app,
          wsBase,
          request,
          async organization(projectConfig) {
            const org = (await admin("POST", "/admin/organizations", { name: "Telephony org" })).json<{ id: string; api_key: string }>();
            const project = await admin("POST", `/admin/organizations/${org.id}/projects`, { name: "support", config: projectConfig });
            if (project.status !== 201) throw new Error(`project creation failed: ${project.body}`);
            return { organizationId: org.id, apiKey: org.api_key, projectId: project.json<{ id: string }>().id };
          },
          async thread(apiKey) {
            const response = await request({ method: "POST", url: "/threads", headers: { authorization: apiKey }, payload: {} });
            if (response.status !== 200) throw new Error(`thread creation failed: ${response.body}`);
            return response.json<{ thread_id: string }>().thread_id;
          },
          async startApp() {
            const pool = database.url ? openPostgres(database.url, 5) : undefined;
            if (pool) pools.push(pool);
            const started = await openApp(pool ?? database.db);
            extra.push(started);
            return started;
          },
        };
      });
      after(async () => {
        for (const app of extra) await app.close().catch(() => undefined);
        for (const pool of pools) await pool.close();
        await harness?.app.close();
      });
      body(() => {
        if (!harness) throw new Error("harness not ready");
        return harness;
      });
    });
  }
}
