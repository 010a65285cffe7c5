/**
 * A Parley app in the benchmark's own process, listening on loopback with `PUBLIC_BASE_URL` set as a vendor needs it,
 * on a fresh database of `kind`, with one organization and a project of `projectConfig`: what the vendor benchmarks
 * (retell, twilio) start from.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pino from "pino";
import { createApp, type App } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import type { VoiceSettings } from "../../src/domain/calls/voice-settings.js";
import type { Db } from "../../src/domain/shared/database.js";
import { migrate } from "../../src/store/migrate.js";
import { openPglite } from "../../src/store/pglite-db.js";
import { openPostgres } from "../../src/store/postgres-db.js";
import type { BenchContext, DbKind } from "./context.js";

export const vendorPublicBaseUrl = "https://parley.example.test";
const adminKey = "bench-admin-key-0123456789abcdef";

export interface VendorApp {
  app: App;
  db: Db;
  /** ws://127.0.0.1:PORT of the listening app. */
  wsBase: string;
  apiKey: string;
  projectId: string;
  /** A request through the app that must succeed; its JSON body. */
  request(method: "POST" | "DELETE", url: string, payload?: unknown): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

export async function startVendorApp(kind: DbKind, context: BenchContext, projectConfig: unknown, voice: Partial<VoiceSettings> = {}): Promise<VendorApp> {
  const database = kind === "postgres" ? await context.postgresDatabase() : undefined;
  const dataDir = await mkdtemp(path.join(tmpdir(), "parley-bench-vendor-"));
  const db = database ? openPostgres(database.url, 10) : await openPglite(undefined);
  await migrate(db);
  const app = await createApp(
    loadConfig({
      ADMIN_API_KEY: adminKey,
      JWT_SECRET: "bench-jwt-secret-0123456789abcdef0123",
      ENCRYPTION_KEY: "bench-encryption-key-0123456789abcdef",
      DATA_DIR: dataDir,
      LOG_LEVEL: "silent",
      PUBLIC_BASE_URL: vendorPublicBaseUrl,
      ...(database ? { DATABASE_URL: database.url } : {}),
    }),
    { db, logger: pino({ level: "silent" }), voice },
  );
  const close = async () => {
    await app.close();
    await db.close();
    await database?.drop();
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    const wsBase = (await app.server.listen({ port: 0, host: "127.0.0.1" })).replace(/^http/, "ws");
    const call = async (method: "POST" | "DELETE", url: string, authorization: string, payload?: unknown) => {
      const response = await app.server.inject({ method, url, headers: { authorization }, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
      if (response.statusCode >= 300) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`);
      return JSON.parse(response.body) as Record<string, unknown>;
    };
    const org = await call("POST", "/admin/organizations", `Bearer ${adminKey}`, { name: "Bench" });
    const apiKey = String(org["api_key"]);
    const project = await call("POST", `/admin/organizations/${String(org["id"])}/projects`, `Bearer ${adminKey}`, { name: "bench", config: projectConfig });
    return { app, db, wsBase, apiKey, projectId: String(project["id"]), request: (method, url, payload) => call(method, url, apiKey, payload), close };
  } catch (error) {
    await close();
    throw error;
  }
}
