import type { Queryable } from "../shared/database.js";

export interface ApiKeyRecord {
  id: string;
  organization_id: string;
  revoked_at: Date | null;
}

export interface OrganizationsRepository {
  create(id: string, name: string, tx?: Queryable): Promise<void>;
  exists(id: string): Promise<boolean>;
  count(): Promise<number>;
  insertApiKey(key: {
    id: string;
    organizationId: string;
    hash: string;
    display: string;
  }, tx?: Queryable): Promise<void>;
  /** Looks a key up by hash and, at most once a minute per key, records its use. */
  findApiKeyByHash(hash: string): Promise<ApiKeyRecord | undefined>;
  /** Records a use of the key, at most once a minute (a cached key is used without looking it up). */
  touchApiKey(id: string): Promise<void>;
  revokeApiKey(id: string): Promise<boolean>;
}

export interface SettingsRepository {
  get(key: string): Promise<string | undefined>;
  /** Sets the value unless one is there already; returns the value that holds. */
  putIfAbsent(key: string, value: string): Promise<string>;
}
