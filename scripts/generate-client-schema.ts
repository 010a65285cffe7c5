// Regenerates packages/client/src/openapi.ts from the OpenAPI document of a throwaway embedded server.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pino from "pino";
import { createApp } from "../src/app.js";
import { loadConfig } from "../src/config.js";
import { clientSchemaPath, clientSchemaSource } from "./client-schema.js";

const dataDir = await mkdtemp(path.join(tmpdir(), "parley-schema-"));
try {
  const config = loadConfig({
    ADMIN_API_KEY: "schema-admin-key-0123456789abcdef",
    JWT_SECRET: "schema-jwt-secret-0123456789abcdef0123",
    ENCRYPTION_KEY: "schema-encryption-key-0123456789abcdef",
    DATA_DIR: dataDir,
    LOG_LEVEL: "silent",
  });
  const app = await createApp(config, { logger: pino({ level: "silent" }) });
  try {
    const document = (await app.server.inject({ method: "GET", url: "/openapi.json" })).json<object>();
    await writeFile(clientSchemaPath, await clientSchemaSource(document));
  } finally {
    await app.close();
  }
} finally {
  await rm(dataDir, { recursive: true, force: true });
}
