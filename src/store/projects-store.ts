import type { ProjectConfig } from "../domain/projects/project-config.js";
import { jsonParam } from "./db.js";
import { type Queryable } from "../domain/shared/database.js";
import type { ProjectRecord, ConfigVersionRecord } from "../domain/projects/projects-repository.js";

const projectColumns = "id, organization_id, name, current_config_version_id, created_at";
const versionColumns = "id, project_id, version, config, encrypted_secrets, created_at";

export class ProjectsStore {
  constructor(private readonly db: Queryable) {}

  /** Inserts the project and its first version; false when the name is taken in the organization. */
  async create(
    project: { id: string; organizationId: string; name: string },
    version: { id: string; config: ProjectConfig; encryptedSecrets: string | null },
    tx: Queryable = this.db,
  ): Promise<boolean> {
    const inserted = await tx.query(
      `INSERT INTO projects (id, organization_id, name, current_config_version_id) VALUES ($1, $2, $3, $4)
       ON CONFLICT (organization_id, name) DO NOTHING RETURNING id`,
      [project.id, project.organizationId, project.name, version.id],
    );
    if (inserted.length === 0) return false;
    await tx.query(
      `INSERT INTO project_config_versions (id, project_id, organization_id, version, config, encrypted_secrets)
       VALUES ($1, $2, $3, 1, $4, $5)`,
      [version.id, project.id, project.organizationId, jsonParam(version.config), version.encryptedSecrets],
    );
    return true;
  }

  /** Appends a version and makes it current, numbering versions without gaps even under concurrent publishes. */
  async addVersion(projectId: string, version: { id: string; config: ProjectConfig; encryptedSecrets: string | null }, tx: Queryable): Promise<number> {
    const [project] = await tx.query<{ organization_id: string }>("SELECT organization_id FROM projects WHERE id = $1 FOR UPDATE", [projectId]);
    if (!project) throw new Error(`project ${projectId} vanished`);
    const [row] = await tx.query<{ version: number }>(
      `INSERT INTO project_config_versions (id, project_id, organization_id, version, config, encrypted_secrets)
       SELECT $1, $2, $3, coalesce(max(version), 0) + 1, $4, $5 FROM project_config_versions WHERE project_id = $2
       RETURNING version`,
      [version.id, projectId, project.organization_id, jsonParam(version.config), version.encryptedSecrets],
    );
    await tx.query("UPDATE projects SET current_config_version_id = $1 WHERE id = $2", [version.id, projectId]);
    return row?.version ?? 0;
  }

  async findById(id: string, organizationId?: string): Promise<ProjectRecord | undefined> {
    const [row] = await this.db.query<ProjectRecord>(
      `SELECT ${projectColumns} FROM projects WHERE id = $1 AND ($2::uuid IS NULL OR organization_id = $2)`,
      [id, organizationId ?? null],
    );
    return row;
  }

  async findByName(organizationId: string, name: string): Promise<ProjectRecord | undefined> {
    const [row] = await this.db.query<ProjectRecord>(
      `SELECT ${projectColumns} FROM projects WHERE organization_id = $1 AND name = $2`,
      [organizationId, name],
    );
    return row;
  }

  async findVersion(projectId: string, versionId: string): Promise<ConfigVersionRecord | undefined> {
    const [row] = await this.db.query<ConfigVersionRecord>(
      `SELECT ${versionColumns} FROM project_config_versions WHERE project_id = $1 AND id = $2`,
      [projectId, versionId],
    );
    return row;
  }

  async findByPhoneNumber(provider: string, digits: string): Promise<ProjectRecord[]> {
    return this.db.query<ProjectRecord>(
      `SELECT p.id, p.organization_id, p.name, p.current_config_version_id, p.created_at FROM projects p JOIN project_config_versions v ON v.id = p.current_config_version_id
        WHERE v.config->'voice'->>'provider' = $1
          AND EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(v.config->'voice'->'accounts', '[]'::jsonb)) account,
                             jsonb_array_elements_text(coalesce(account->'phone_numbers', '[]'::jsonb)) phone
                       WHERE regexp_replace(phone, '[^0-9]', '', 'g') = $2)
        ORDER BY p.created_at, p.id`,
      [provider, digits],
    );
  }

  async listVersionIds(projectId: string): Promise<{ id: string; version: number; created_at: Date }[]> {
    return this.db.query(
      "SELECT id, version, created_at FROM project_config_versions WHERE project_id = $1 ORDER BY version",
      [projectId],
    );
  }
}
