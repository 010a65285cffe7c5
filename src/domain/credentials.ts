import type { OrganizationsStore } from "../store/organizations-store.js";
import type { SettingsStore } from "../store/organizations-store.js";
import { ForbiddenError, NotFoundError, UnauthorizedError } from "./errors.js";
import { hashCredential, sameSecret } from "./secrets.js";
import { looksLikeJwt, type ThreadTokens } from "./thread-tokens.js";

export type Caller =
  | { kind: "apiKey"; organizationId: string; apiKeyId: string }
  | { kind: "threadToken"; organizationId: string; threadId: string };

export const ADMIN_KEY_HASH_SETTING = "admin_key_hash";

/** `Authorization: <credential>` or `Authorization: Bearer <credential>`. */
export function credentialOf(header: string): string {
  const match = /^\s*bearer\s+(.*)$/i.exec(header);
  return (match ? match[1]! : header).trim();
}

/** Turns an Authorization header into the caller it names, or refuses it (401). */
export class Authenticator {
  constructor(
    private readonly organizations: OrganizationsStore,
    private readonly settings: SettingsStore,
    private readonly tokens: ThreadTokens,
    private readonly configuredAdminKey: string | undefined,
  ) {}

  async caller(header: string, acceptThreadToken: boolean): Promise<Caller> {
    const credential = credentialOf(header);
    if (credential === "") throw new UnauthorizedError("Invalid API key or token");
    if (looksLikeJwt(credential)) {
      const claims = await this.tokens.verify(credential);
      if (!acceptThreadToken) throw new ForbiddenError("A thread token cannot be used for this endpoint");
      return { kind: "threadToken", organizationId: claims.organizationId, threadId: claims.threadId };
    }
    const key = await this.organizations.findApiKeyByHash(hashCredential(credential));
    if (!key) throw new UnauthorizedError("Invalid API key or token");
    if (key.revoked_at !== null) throw new UnauthorizedError("API key has been revoked");
    return { kind: "apiKey", organizationId: key.organization_id, apiKeyId: key.id };
  }

  /** The admin interface answers 404 when no admin key exists, so that it is invisible until enabled. */
  async admin(header: string | undefined): Promise<void> {
    const expectedHash = this.configuredAdminKey ? hashCredential(this.configuredAdminKey) : await this.settings.get(ADMIN_KEY_HASH_SETTING);
    if (!expectedHash) throw new NotFoundError("Not Found");
    const credential = header === undefined ? "" : credentialOf(header);
    if (credential === "" || !sameSecret(hashCredential(credential), expectedHash)) {
      throw new UnauthorizedError("Invalid admin key");
    }
  }
}

/** A thread token opens only its own thread. */
export function assertThreadAccess(caller: Caller, threadId: string): void {
  if (caller.kind === "threadToken" && caller.threadId !== threadId) {
    throw new ForbiddenError("This token is not valid for this thread");
  }
}
