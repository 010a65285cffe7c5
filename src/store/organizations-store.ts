import type { Queryable } from "../domain/shared/database.js";
import type { ApiKeyRecord } from "../domain/organizations/organizations-repository.js";

export class OrganizationsStore {
  constructor(private readonly db: Queryable) {}

  async create(id: string, name: string, tx: Queryable = this.db): Promise<void> {
    await tx.query("INSERT INTO organizations (id, name) VALUES ($1, $2)", [id, name]);
  }

  async exists(id: string): Promise<boolean> {
    const rows = await this.db.query("SELECT 1 FROM organizations WHERE id = $1", [id]);
    return rows.length > 0;
  }

  async count(): Promise<number> {
    const [row] = await this.db.query<{ n: number }>("SELECT count(*)::int AS n FROM organizations");
    return row?.n ?? 0;
  }

  async insertApiKey(key: { id: string; organizationId: string; hash: string; display: string }, tx: Queryable = this.db): Promise<void> {
    await tx.query("INSERT INTO api_keys (id, organization_id, key_hash, display) VALUES ($1, $2, $3, $4)", [
      key.id,
      key.organizationId,
      key.hash,
      key.display,
    ]);
  }

  /** Looks a key up by hash and, at most once a minute per key, records its use. */
  async findApiKeyByHash(hash: string): Promise<ApiKeyRecord | undefined> {
    const [row] = await this.db.query<ApiKeyRecord & { stale: boolean }>(
      `SELECT id, organization_id, revoked_at,
              (last_used_at IS NULL OR last_used_at < now() - interval '1 minute') AS stale
         FROM api_keys WHERE key_hash = $1`,
      [hash],
    );
    if (row?.stale && row.revoked_at === null) {
      await this.db.query("UPDATE api_keys SET last_used_at = now() WHERE id = $1", [row.id]);
    }
    return row;
  }

  /** Records a use of the key, at most once a minute (a cached key is used without looking it up). */
  async touchApiKey(id: string): Promise<void> {
    await this.db.query("UPDATE api_keys SET last_used_at = now() WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')", [id]);
  }

  async revokeApiKey(id: string): Promise<boolean> {
    const rows = await this.db.query(
      "UPDATE api_keys SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1 RETURNING id",
      [id],
    );
    return rows.length > 0;
  }
}

export class SettingsStore {
  constructor(private readonly db: Queryable) {}

  async get(key: string): Promise<string | undefined> {
    const [row] = await this.db.query<{ value: string }>("SELECT value FROM server_settings WHERE key = $1", [key]);
    return row?.value;
  }

  /** Sets the value unless one is there already; returns the value that holds. */
  async putIfAbsent(key: string, value: string): Promise<string> {
    await this.db.query("INSERT INTO server_settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING", [key, value]);
    return (await this.get(key)) ?? value;
  }
}
