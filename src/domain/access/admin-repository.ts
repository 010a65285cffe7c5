import type { Queryable } from "../shared/database.js";

export interface OrganizationRow {
  id: string;
  name: string;
  created_at: Date;
}

export interface ProjectRow {
  id: string;
  name: string;
  current_config_version_id: string;
  created_at: Date;
}

export interface ApiKeyRow {
  id: string;
  display: string;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

/**
 * What the operator-wide admin interface reads and writes beyond creation: listings in id order (ids are UUIDv7, so
 * that is creation order) after a keyset position, key rotation, and the admin key's stored hash.
 */

/** What the admin listings, key rotation and the admin key reset need from the database. */
export interface AdminRepository {
  listOrganizations(afterId: string | null, limit: number): Promise<OrganizationRow[]>;
  listProjects(organizationId: string, afterId: string | null, limit: number): Promise<ProjectRow[]>;
  listApiKeys(organizationId: string, afterId: string | null, limit: number): Promise<ApiKeyRow[]>;
  /** Revokes the key if it is live; its organization, or undefined when there is no live key of that id. */
  revokeLiveKey(id: string, tx: Queryable): Promise<string | undefined>;
  apiKeyExists(id: string): Promise<boolean>;
  putSetting(key: string, value: string): Promise<void>;
}
