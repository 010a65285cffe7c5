import { Parley } from "../../../packages/client/src/index.js";

/**
 * The console's credentials live in sessionStorage: they last as long as the tab and never reach another tab, a
 * cookie or the server's logs. The API key is sent only in `Authorization` headers.
 */
const apiKeyItem = "parley.console.apiKey";
const adminKeyItem = "parley.console.adminKey";
const projectItem = "parley.console.project";

export const session = {
  apiKey: () => sessionStorage.getItem(apiKeyItem),
  adminKey: () => sessionStorage.getItem(adminKeyItem),
  signIn(apiKey: string) {
    sessionStorage.setItem(apiKeyItem, apiKey);
  },
  setAdminKey(adminKey: string | null) {
    if (adminKey) sessionStorage.setItem(adminKeyItem, adminKey);
    else sessionStorage.removeItem(adminKeyItem);
  },
  signOut() {
    sessionStorage.removeItem(apiKeyItem);
    sessionStorage.removeItem(adminKeyItem);
  },
  /** The project chat and simulations use, remembered for the tab. */
  project: () => sessionStorage.getItem(projectItem) ?? "demo",
  setProject(name: string) {
    sessionStorage.setItem(projectItem, name);
  },
};

const baseUrl = () => location.origin;

export function apiClient(apiKey = session.apiKey() ?? ""): Parley {
  return new Parley({ baseUrl: baseUrl(), credential: apiKey });
}

export function adminClient(): Parley {
  return new Parley({ baseUrl: baseUrl(), adminKey: session.adminKey() ?? "" });
}
