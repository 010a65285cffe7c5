import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { chromium, type Browser, type Page } from "playwright-core";

/** Headless Chromium as the browser tests run it: no sandbox (containers) and nothing fetched in the background. */
export function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  return chromium.launch({
    executablePath: "/usr/bin/chromium",
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", ...extraArgs],
  });
}

export interface EmbeddingSite {
  /** The page, on another origin than Parley's (localhost against 127.0.0.1). */
  url: string;
  /** The thread tokens the site's backend handed to the page, in order. */
  tokens: string[];
  close(): Promise<void>;
}

/**
 * A customer's site: a page that mounts the widget (`window.widget`), and its backend, which holds the API key and
 * answers the page's `GET /token` with a thread token it gets from `POST /threads/{id}/token`.
 */
export async function startEmbeddingSite(options: {
  parley: string;
  apiKey: string;
  threadId: string;
  projectId?: string;
  /** Awaited before each token is minted: holds the page's requests for a token as long as a test likes. */
  beforeToken?: () => Promise<void>;
}): Promise<EmbeddingSite> {
  const { parley, apiKey, threadId, projectId, beforeToken } = options;
  const tokens: string[] = [];
  const server = createServer((request, response) => {
    void (async () => {
      if (request.url === "/token") {
        await beforeToken?.();
        const minted = await fetch(`${parley}/threads/${threadId}/token`, { method: "POST", headers: { authorization: apiKey } });
        const body = (await minted.json()) as { access_token: string };
        tokens.push(body.access_token);
        response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ access_token: body.access_token }));
        return;
      }
      response.writeHead(200, { "content-type": "text/html" }).end(`<!doctype html><html><body style="background:#f4f5f8;padding:20px;margin:0">
<h3 style="font:600 16px system-ui,sans-serif;margin:0 0 12px">Acme support (a customer's page)</h3><div id="widget"></div>
<script src="${parley}/widget.js"></script>
<script>
window.widget = Parley.mount({
  element: document.getElementById("widget"), threadId: ${JSON.stringify(threadId)}, projectName: "support",${projectId ? ` projectId: ${JSON.stringify(projectId)},` : ""}
  getToken: () => fetch("/token").then((r) => r.json()).then((j) => j.access_token),
});
</script></body></html>`);
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://localhost:${(server.address() as AddressInfo).port}/`;
  if (new URL(url).origin === new URL(parley).origin) throw new Error("the site must be on another origin than Parley");
  return {
    url,
    tokens,
    close() {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/** The page's console errors and uncaught exceptions, as they happen. */
export function consoleErrorsOf(tab: Page): string[] {
  const errors: string[] = [];
  tab.on("console", (message) => {
    if (message.type() === "error") errors.push(message.text());
  });
  tab.on("pageerror", (error) => errors.push(error.message));
  return errors;
}
