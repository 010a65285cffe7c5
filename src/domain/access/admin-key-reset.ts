import type { AdminRepository } from "./admin-repository.js";
import { ADMIN_KEY_HASH_SETTING } from "./credentials.js";
import { hashCredential, newCredential } from "./secrets.js";

/**
 * For an operator who lost the generated admin key (it is printed once, at first start): a new one replaces the
 * stored hash, so the old key stops working on the next request of every instance, and is returned once. Run by
 * `parley admin reset-key` where the database is reachable; having the database is the proof of being the operator.
 * An `ADMIN_API_KEY` setting takes precedence over the stored hash, so there is nothing to reset while one is set.
 */
export async function resetAdminKey(store: AdminRepository): Promise<string> {
  const adminKey = newCredential("adm_");
  await store.putSetting(ADMIN_KEY_HASH_SETTING, hashCredential(adminKey));
  return adminKey;
}
