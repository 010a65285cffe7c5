import type { AdminRepository, ApiKeyRow, OrganizationRow, ProjectRow } from "./admin-repository.js";
import type { Db } from "../shared/database.js";
import type { OrganizationsRepository } from "../organizations/organizations-repository.js";
import { invalidCursor } from "../shared/cursors.js";
import { ConflictError, NotFoundError } from "../shared/errors.js";
import { uuidv7 } from "../shared/ids.js";
import { changeTags, type Invalidations } from "../cache/invalidation.js";
import { hashCredential, newCredential, redact } from "./secrets.js";

export interface Page<T> {
  items: T[];
  cursor: string | null;
}

export interface OrganizationListItem {
  id: string;
  name: string;
  created_at: string;
}

export interface ProjectListItem {
  id: string;
  name: string;
  config_version_id: string;
  created_at: string;
}

/** A key as an operator may see it: its redacted form and dates, never the key or its hash. */
export interface ApiKeyListItem {
  id: string;
  display: string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A listing cursor is the last id of the page, opaque to clients (URL-safe Base64). */
function afterIdOf(cursor: string | undefined): string | null {
  if (cursor === undefined) return null;
  const id = /^[A-Za-z0-9_-]+$/.test(cursor) ? Buffer.from(cursor, "base64url").toString("utf8") : "";
  if (!uuid.test(id)) throw invalidCursor(cursor);
  return id;
}

async function page<R extends { id: string }, T>(rows: (limit: number) => Promise<R[]>, limit: number, view: (row: R) => T): Promise<Page<T>> {
  const fetched = await rows(limit + 1);
  const items = fetched.slice(0, limit);
  const last = items.at(-1);
  return { items: items.map(view), cursor: fetched.length > limit && last ? Buffer.from(last.id).toString("base64url") : null };
}

const iso = (date: Date | null) => (date === null ? null : date.toISOString());

/** The operator's view across organizations: listings and key rotation. */
export class AdminDirectory {
  constructor(
    private readonly db: Db,
    private readonly store: AdminRepository,
    private readonly organizations: OrganizationsRepository,
    private readonly invalidations: Invalidations,
  ) {}

  listOrganizations(cursor: string | undefined, limit: number): Promise<Page<OrganizationListItem>> {
    const after = afterIdOf(cursor);
    return page((n) => this.store.listOrganizations(after, n), limit, (row: OrganizationRow) => ({ id: row.id, name: row.name, created_at: row.created_at.toISOString() }));
  }

  async listProjects(organizationId: string, cursor: string | undefined, limit: number): Promise<Page<ProjectListItem>> {
    const after = afterIdOf(cursor);
    await this.requireOrganization(organizationId);
    return page((n) => this.store.listProjects(organizationId, after, n), limit, (row: ProjectRow) => ({
      id: row.id,
      name: row.name,
      config_version_id: row.current_config_version_id,
      created_at: row.created_at.toISOString(),
    }));
  }

  async listApiKeys(organizationId: string, cursor: string | undefined, limit: number): Promise<Page<ApiKeyListItem>> {
    const after = afterIdOf(cursor);
    await this.requireOrganization(organizationId);
    return page((n) => this.store.listApiKeys(organizationId, after, n), limit, (row: ApiKeyRow) => ({
      id: row.id,
      display: row.display,
      created_at: row.created_at.toISOString(),
      last_used_at: iso(row.last_used_at),
      revoked_at: iso(row.revoked_at),
    }));
  }

  /**
   * Replaces a live key: in one transaction the old key is revoked and a new one of the same organization created,
   * so there is never a moment with both or neither. The new key is returned once; the answer waits, as a
   * revocation does, until every listening instance has dropped the old key.
   */
  async rotateApiKey(id: string): Promise<{ id: string; api_key: string; replaced_key_id: string }> {
    const tag = changeTags.apiKey(id);
    const notification = await this.invalidations.expect(tag);
    try {
      const newId = uuidv7();
      const apiKey = newCredential("sk_");
      const rotated = await this.db.transaction(async (tx) => {
        const organizationId = await this.store.revokeLiveKey(id, tx);
        if (organizationId === undefined) return false;
        await this.organizations.insertApiKey({ id: newId, organizationId, hash: hashCredential(apiKey), display: redact(apiKey) }, tx);
        return true;
      });
      if (!rotated) {
        if (await this.store.apiKeyExists(id)) throw new ConflictError("API key has already been revoked");
        throw new NotFoundError("API key not found");
      }
      this.invalidations.changed(tag);
      await notification.heard;
      return { id: newId, api_key: apiKey, replaced_key_id: id };
    } finally {
      notification.cancel();
    }
  }

  private async requireOrganization(id: string): Promise<void> {
    if (!(await this.organizations.exists(id))) throw new NotFoundError("Organization not found");
  }
}
