import { randomBytes } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Config } from "./config.js";

export interface ServerSecrets {
  jwtSecret: string;
  encryptionKey: string;
}

/**
 * Settings win; in embedded mode the secrets are generated once and kept in the data folder
 * (mode 0600), so tokens and encrypted provider keys survive restarts.
 */
export async function loadServerSecrets(config: Config): Promise<ServerSecrets> {
  if (config.jwtSecret && config.encryptionKey) return { jwtSecret: config.jwtSecret, encryptionKey: config.encryptionKey };
  const file = path.join(config.dataDir, "secrets.json");
  let stored: Partial<ServerSecrets> = {};
  try {
    stored = JSON.parse(await readFile(file, "utf8")) as Partial<ServerSecrets>;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  const secrets = {
    jwtSecret: stored.jwtSecret ?? randomBytes(32).toString("base64url"),
    encryptionKey: stored.encryptionKey ?? randomBytes(32).toString("base64url"),
  };
  if (stored.jwtSecret !== secrets.jwtSecret || stored.encryptionKey !== secrets.encryptionKey) {
    await mkdir(config.dataDir, { recursive: true });
    await writeFile(file, JSON.stringify(secrets), { mode: 0o600 });
  }
  return { jwtSecret: config.jwtSecret ?? secrets.jwtSecret, encryptionKey: config.encryptionKey ?? secrets.encryptionKey };
}
