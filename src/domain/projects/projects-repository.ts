import type { ProjectConfig } from "./project-config.js";
import type { Queryable } from "../shared/database.js";

export interface ProjectRecord {
  id: string;
  organization_id: string;
  name: string;
  current_config_version_id: string;
  created_at: Date;
}

export interface ConfigVersionRecord {
  id: string;
  project_id: string;
  version: number;
  config: ProjectConfig;
  encrypted_secrets: string | null;
  created_at: Date;
}

export interface ProjectsRepository {
  /** Inserts the project and its first version; false when the name is taken in the organization. */
  create(project: {
    id: string;
    organizationId: string;
    name: string;
  }, version: {
    id: string;
    config: ProjectConfig;
    encryptedSecrets: string | null;
  }, tx?: Queryable): Promise<boolean>;
  /** Appends a version and makes it current, numbering versions without gaps even under concurrent publishes. */
  addVersion(projectId: string, version: {
    id: string;
    config: ProjectConfig;
    encryptedSecrets: string | null;
  }, tx: Queryable): Promise<number>;
  findById(id: string, organizationId?: string): Promise<ProjectRecord | undefined>;
  findByName(organizationId: string, name: string): Promise<ProjectRecord | undefined>;
  findVersion(projectId: string, versionId: string): Promise<ConfigVersionRecord | undefined>;
  /**
   * The projects, of every organization, whose current version has `provider` as its voice provider and a voice
   * account with the phone number whose digits are `digits`, oldest first: whose number a vendor's caller dialed.
   */
  findByPhoneNumber(provider: string, digits: string): Promise<ProjectRecord[]>;
  listVersionIds(projectId: string): Promise<{
    id: string;
    version: number;
    created_at: Date;
  }[]>;
}
