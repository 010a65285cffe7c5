import type { AdminRepository, ApiKeyRow, OrganizationRow, ProjectRow } from "../domain/access/admin-repository.js";
import type { Queryable } from "../domain/shared/database.js";

export class AdminStore implements AdminRepository {
  constructor(private readonly db: Queryable) {}

  listOrganizations(afterId: string | null, limit: number): Promise<OrganizationRow[]> {
    return this.db.query<OrganizationRow>(
      "SELECT id, name, created_at FROM organizations WHERE $1::uuid IS NULL OR id > $1::uuid ORDER BY id LIMIT $2",
      [afterId, limit],
    );
  }

  listProjects(organizationId: string, afterId: string | null, limit: number): Promise<ProjectRow[]> {
    return this.db.query<ProjectRow>(
      `SELECT id, name, current_config_version_id, created_at FROM projects
        WHERE organization_id = $1 AND ($2::uuid IS NULL OR id > $2::uuid) ORDER BY id LIMIT $3`,
      [organizationId, afterId, limit],
    );
  }

  listApiKeys(organizationId: string, afterId: string | null, limit: number): Promise<ApiKeyRow[]> {
    return this.db.query<ApiKeyRow>(
      `SELECT id, display, created_at, last_used_at, revoked_at FROM api_keys
        WHERE organization_id = $1 AND ($2::uuid IS NULL OR id > $2::uuid) ORDER BY id LIMIT $3`,
      [organizationId, afterId, limit],
    );
  }

  /** Revokes the key if it is live; returns its organization, or undefined when there is no such live key. */
  async revokeLiveKey(id: string, tx: Queryable): Promise<string | undefined> {
    const [row] = await tx.query<{ organization_id: string }>(
      "UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL RETURNING organization_id",
      [id],
    );
    return row?.organization_id;
  }

  async apiKeyExists(id: string): Promise<boolean> {
    return (await this.db.query("SELECT 1 FROM api_keys WHERE id = $1", [id])).length > 0;
  }

  async putSetting(key: string, value: string): Promise<void> {
    await this.db.query("INSERT INTO server_settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value", [key, value]);
  }
}
