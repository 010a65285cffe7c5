import type { OrganizationsRepository } from "../organizations/organizations-repository.js";
import type { SettingsRepository } from "../organizations/organizations-repository.js";
import { ForbiddenError, NotFoundError, UnauthenticatedError } from "../shared/errors.js";
import { changeTags } from "../cache/invalidation.js";
import { hashCredential, sameSecret } from "./secrets.js";
import type { TaggedCache } from "../cache/tagged-cache.js";
import { looksLikeJwt, type ThreadTokens } from "./thread-tokens.js";

export type Caller =
  | { kind: "apiKey"; organizationId: string; apiKeyId: string }
  | { kind: "threadToken"; organizationId: string; threadId: string };

export const ADMIN_KEY_HASH_SETTING = "admin_key_hash";

/** A valid API key as the credential cache holds it (by the key's hash). */
export interface CachedApiKey {
  caller: Extract<Caller, { kind: "apiKey" }>;
  /** When this instance last recorded the key's use (`last_used_at` is kept to the minute). */
  usedRecordedAt: number;
}

const lastUsedResolutionMs = 60_000;

/** `Authorization: <credential>` or `Authorization: Bearer <credential>`. */
export function credentialOf(header: string): string {
  const match = /^\s*bearer\s+(.*)$/i.exec(header);
  return (match ? match[1]! : header).trim();
}

/** Turns an Authorization header into the caller it names, or refuses it as unauthenticated. */
export class Authenticator {
  constructor(
    private readonly organizations: OrganizationsRepository,
    private readonly settings: SettingsRepository,
    private readonly tokens: ThreadTokens,
    private readonly configuredAdminKey: string | undefined,
    /** Valid keys by hash; revocations reach it through `Invalidations` (tag `api_key:<id>`). */
    private readonly apiKeys: TaggedCache<CachedApiKey>,
  ) {}

  async caller(header: string, acceptThreadToken: boolean): Promise<Caller> {
    const credential = credentialOf(header);
    if (credential === "") throw new UnauthenticatedError("Invalid API key or token");
    if (looksLikeJwt(credential)) {
      const claims = await this.tokens.verify(credential);
      if (!acceptThreadToken) throw new ForbiddenError("A thread token cannot be used for this endpoint");
      return { kind: "threadToken", organizationId: claims.organizationId, threadId: claims.threadId };
    }
    const hash = hashCredential(credential);
    const remembered = this.rememberedApiKey(hash);
    if (remembered) return remembered;
    const loaded = await this.apiKeys.load(
      hash,
      [changeTags.anyApiKey],
      async () => {
        const key = await this.organizations.findApiKeyByHash(hash);
        if (!key) throw new UnauthenticatedError("Invalid API key or token");
        if (key.revoked_at !== null) throw new UnauthenticatedError("API key has been revoked");
        return { caller: { kind: "apiKey", organizationId: key.organization_id, apiKeyId: key.id }, usedRecordedAt: Date.now() };
      },
      (key) => [changeTags.apiKey(key.caller.apiKeyId), changeTags.organization(key.caller.organizationId)],
    );
    return loaded.caller;
  }

  /**
   * The caller an API key names, when this instance holds the key in memory; undefined otherwise (a thread token, an
   * unknown key, a key not looked up yet), and then `caller` decides. For answers served without a database read.
   */
  rememberedCaller(header: string): Caller | undefined {
    const credential = credentialOf(header);
    if (credential === "" || looksLikeJwt(credential)) return undefined;
    return this.rememberedApiKey(hashCredential(credential));
  }

  private rememberedApiKey(hash: string): Caller | undefined {
    const cached = this.apiKeys.get(hash);
    if (!cached) return undefined;
    const now = Date.now();
    if (now - cached.usedRecordedAt >= lastUsedResolutionMs) {
      cached.usedRecordedAt = now;
      // Bookkeeping only: a failure to record the use must not fail the request.
      this.organizations.touchApiKey(cached.caller.apiKeyId).catch(() => undefined);
    }
    return cached.caller;
  }

  /** The admin interface is not found when no admin key exists, so that it is invisible until enabled. */
  async admin(header: string | undefined): Promise<void> {
    const expectedHash = this.configuredAdminKey ? hashCredential(this.configuredAdminKey) : await this.settings.get(ADMIN_KEY_HASH_SETTING);
    if (!expectedHash) throw new NotFoundError("Not Found");
    const credential = header === undefined ? "" : credentialOf(header);
    if (credential === "" || !sameSecret(hashCredential(credential), expectedHash)) {
      throw new UnauthenticatedError("Invalid admin key");
    }
  }
}
