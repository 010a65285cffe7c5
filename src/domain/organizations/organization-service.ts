import type { Db } from "../shared/database.js";
import type { OrganizationsRepository } from "./organizations-repository.js";
import { NotFoundError } from "../shared/errors.js";
import { changeTags, type Invalidations } from "../cache/invalidation.js";
import { uuidv7 } from "../shared/ids.js";
import { hashCredential, newCredential, redact } from "../access/secrets.js";

export class OrganizationService {
  constructor(
    private readonly db: Db,
    private readonly store: OrganizationsRepository,
    private readonly invalidations: Invalidations,
  ) {}

  /** Creates the organization with its first API key; the key is returned once and only its hash is kept. */
  async create(name: string): Promise<{ id: string; name: string; api_key: string }> {
    const id = uuidv7();
    const apiKey = newCredential("sk_");
    await this.db.transaction(async (tx) => {
      await this.store.create(id, name, tx);
      await this.store.insertApiKey({ id: uuidv7(), organizationId: id, hash: hashCredential(apiKey), display: redact(apiKey) }, tx);
    });
    return { id, name, api_key: apiKey };
  }

  async createApiKey(organizationId: string): Promise<{ id: string; api_key: string }> {
    if (!(await this.store.exists(organizationId))) throw new NotFoundError("Organization not found");
    const id = uuidv7();
    const apiKey = newCredential("sk_");
    await this.store.insertApiKey({ id, organizationId, hash: hashCredential(apiKey), display: redact(apiKey) });
    return { id, api_key: apiKey };
  }

  /**
   * Revoked at once on every instance: the answer waits until every listening instance has acknowledged the
   * revocation, having dropped the key from its cache (see docs/deployment.md).
   */
  async revokeApiKey(id: string): Promise<void> {
    const tag = changeTags.apiKey(id);
    const notification = await this.invalidations.expect(tag);
    try {
      if (!(await this.store.revokeApiKey(id))) throw new NotFoundError("API key not found");
      this.invalidations.changed(tag);
      await notification.heard;
    } finally {
      notification.cancel();
    }
  }

  async exists(id: string): Promise<boolean> {
    return this.store.exists(id);
  }

  async count(): Promise<number> {
    return this.store.count();
  }
}
