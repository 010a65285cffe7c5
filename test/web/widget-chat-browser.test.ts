import assert from "node:assert/strict";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import type { Browser, Page } from "playwright-core";
import { startFakeOpenAi, type FakeLlmServer } from "../support/fake-llm-servers.js";
import { forEachDatabase, type Harness } from "../support/harness.js";
import { pollUntil } from "../support/polling.js";
import { consoleErrorsOf, launchChromium, startEmbeddingSite, type EmbeddingSite } from "./widget-page.js";

const artifacts = path.resolve("test/artifacts");

interface ParleyExchange {
  method: string;
  path: string;
  authorization: string | undefined;
  status: number;
}

interface OpenWidget {
  tab: Page;
  site: EmbeddingSite;
  apiKey: string;
  threadId: string;
  consoleErrors: string[];
  /** The page's requests to Parley with their answers, in the order the answers came. */
  exchanges(): Promise<ParleyExchange[]>;
  /** Every request the page made, anywhere, as text: URL, all headers and body. */
  requestsAsText(): Promise<string[]>;
  /** Each agent message's successive texts, as the page showed them. */
  replies(): Promise<string[][]>;
  history(): Promise<{ role: string; message: string }[]>;
}

/** A customer's page with the widget, on a thread of a new organization whose agent is the fake model. */
async function openWidget(
  h: Harness,
  browser: Browser,
  parley: string,
  model: FakeLlmServer,
  beforeToken?: () => Promise<void>,
): Promise<OpenWidget> {
  const { apiKey } = await h.organization({ agent: { provider: "openai", model: "fake-model", base_url: model.url, api_key: "sk-fake" } });
  const threadId = await h.thread(apiKey);
  const site = await startEmbeddingSite({ parley, apiKey, threadId, ...(beforeToken ? { beforeToken } : {}) });
  const tab = await browser.newPage({ viewport: { width: 380, height: 410 }, deviceScaleFactor: 2 });
  const consoleErrors = consoleErrorsOf(tab);
  const exchanges: Promise<ParleyExchange>[] = [];
  const requests: Promise<string>[] = [];
  tab.on("request", (request) => requests.push(request.allHeaders().then((headers) => JSON.stringify([request.url(), headers, request.postData()]))));
  tab.on("response", (response) => {
    const request = response.request();
    if (!request.url().startsWith(parley)) return;
    const { pathname } = new URL(request.url());
    exchanges.push(
      request.allHeaders().then((headers) => ({ method: request.method(), path: pathname, authorization: headers["authorization"], status: response.status() })),
    );
  });
  await tab.goto(site.url);
  await tab.getByRole("textbox", { name: "Message" }).waitFor({ timeout: 15_000 }).catch((error: unknown) => {
    throw new Error(`the widget did not mount: ${String(error)}; page errors: ${JSON.stringify(consoleErrors)}`);
  });
  await tab.evaluate(() => {
    const shown: string[][] = [];
    (window as unknown as { replies: string[][] }).replies = shown;
    const log = document.querySelector(".parley-log");
    if (!log) throw new Error("no conversation log");
    new MutationObserver(() => {
      log.querySelectorAll(".parley-agent").forEach((node, index) => {
        const texts = (shown[index] ??= []);
        if (texts.at(-1) !== node.textContent) texts.push(node.textContent ?? "");
      });
    }).observe(log, { subtree: true, childList: true, characterData: true });
  });
  return {
    tab,
    site,
    apiKey,
    threadId,
    consoleErrors,
    exchanges: () => Promise.all(exchanges),
    requestsAsText: () => Promise.all(requests),
    replies: () => tab.evaluate(() => (window as unknown as { replies: string[][] }).replies),
    async history() {
      const page = await h.request({ method: "GET", url: `/threads/${threadId}/messages`, headers: { authorization: apiKey } });
      return page.json<{ messages: { role: string; message: string }[] }>().messages.map(({ role, message }) => ({ role, message }));
    },
  };
}

/** Types a message into the widget's labelled input and sends it with Enter, as a visitor would. */
async function sendWithEnter(tab: Page, text: string): Promise<void> {
  await tab.getByRole("textbox", { name: "Message" }).click();
  await tab.keyboard.type(text);
  await tab.keyboard.press("Enter");
}

/** Waits until the newest agent message reads exactly `text`. */
async function waitForReply(tab: Page, text: string): Promise<void> {
  await tab
    .waitForFunction((expected) => Array.from(document.querySelectorAll(".parley-agent")).at(-1)?.textContent === expected, text, { timeout: 15_000 })
    .catch(async (error: unknown) => {
      const shown = await tab.evaluate(() => document.querySelector(".parley")?.textContent);
      throw new Error(`the widget never showed ${JSON.stringify(text)}: ${String(error)}; it shows ${JSON.stringify(shown)}`);
    });
}

describe("the widget's chat in headless Chromium, on a page of another origin", () => {
  let browser: Browser | undefined;
  let model: FakeLlmServer | undefined;
  const sites: EmbeddingSite[] = [];
  before(async () => {
    await mkdir(artifacts, { recursive: true });
    browser = await launchChromium();
    model = await startFakeOpenAi();
  });
  after(async () => {
    await browser?.close();
    for (const site of sites) await site.close();
    await model?.close();
  });
  const ready = () => {
    if (!browser || !model) throw new Error("the browser and the model are not ready");
    return { browser, model };
  };

  forEachDatabase(
    "chat",
    (h) => {
      let parley = "";
      before(async () => {
        parley = await h().server.listen({ port: 0, host: "127.0.0.1" });
      });

      test("a typed message gets a reply that streams into the page; both are stored, and the page only ever held a thread token", async () => {
        const { browser, model } = ready();
        let releaseTheRest = () => {};
        const theRest = new Promise<void>((resolve) => (releaseTheRest = resolve));
        model.setBehaviour([
          // The model holds the end of its reply until the test has seen the beginning in the page.
          { chunks: ["Our office ", "is at ", "1 Main ", "Street, ", "second floor."], beforeChunk: async (index) => (index === 2 ? theRest : undefined) },
          { chunks: ["You're ", "welcome!"] },
        ]);
        const widget = await openWidget(h(), browser, parley, model);
        sites.push(widget.site);
        const { tab } = widget;

        await sendWithEnter(tab, "Where is your office?");
        await waitForReply(tab, "Our office is at ");
        assert.equal(await tab.getByRole("textbox", { name: "Message" }).inputValue(), "");
        await tab.screenshot({ path: path.join(artifacts, "widget-chat-streaming.png") });
        releaseTheRest();
        await waitForReply(tab, "Our office is at 1 Main Street, second floor.");

        // The second message goes from the Send button, reached with Tab and pressed with Enter.
        await tab.keyboard.type("Thanks!");
        await tab.keyboard.press("Tab");
        assert.equal(await tab.evaluate(() => document.activeElement?.textContent), "Send");
        await tab.keyboard.press("Enter");
        await waitForReply(tab, "You're welcome!");
        await tab.getByRole("textbox", { name: "Message" }).focus();
        await tab.screenshot({ path: path.join(artifacts, "widget-chat.png") });
        // The call button is named for what it does (its microphone is a drawing, hidden from assistive technology).
        assert.equal(await tab.getByRole("button", { name: "Talk", exact: true }).count(), 1);

        // The first reply grew in the page: every text it showed extends the one before, and it was shown half-way.
        const shown = (await widget.replies())[0]?.filter((text) => text !== "…") ?? [];
        assert.ok(shown.includes("Our office is at "), JSON.stringify(shown));
        assert.equal(shown.at(-1), "Our office is at 1 Main Street, second floor.");
        for (const [index, text] of shown.slice(1).entries()) assert.ok(text.startsWith(shown[index] ?? ""), `the reply only grows: ${JSON.stringify(shown)}`);

        assert.deepEqual(await widget.history(), [
          { role: "user", message: "Where is your office?" },
          { role: "assistant", message: "Our office is at 1 Main Street, second floor." },
          { role: "user", message: "Thanks!" },
          { role: "assistant", message: "You're welcome!" },
        ]);

        // One thread token, from the site's backend, far from expiry: used for both messages, and nothing else was sent.
        assert.equal(widget.site.tokens.length, 1);
        const bearer = `Bearer ${widget.site.tokens[0] ?? ""}`;
        const exchanges = await widget.exchanges();
        assert.deepEqual(
          exchanges.filter((exchange) => exchange.path === "/chat").map(({ method, status, authorization }) => [method, status, authorization]),
          [
            ["POST", 200, bearer],
            ["POST", 200, bearer],
          ],
        );
        for (const exchange of exchanges) assert.ok(exchange.authorization === undefined || exchange.authorization === bearer, JSON.stringify(exchange));
        for (const request of await widget.requestsAsText()) assert.ok(!request.includes(widget.apiKey), `the API key reached the page: ${request}`);
        assert.ok(!(await tab.content()).includes(widget.apiKey));
        assert.deepEqual(widget.consoleErrors, []);
        await tab.close();
      });

      test("messages sent while the page's backend is still fetching a token share that one token", async () => {
        const { browser, model } = ready();
        // Each reply names the message it answers: the two turns may reach the model in either order.
        model.setBehaviour((request) => {
          const messages = (request.json as { messages: { role: string; content: string }[] }).messages;
          return { chunks: ["Reply to ", messages.filter((message) => message.role === "user").at(-1)?.content ?? ""] };
        });
        let releaseTokens = () => {};
        const tokensReleased = new Promise<void>((resolve) => (releaseTokens = resolve));
        const widget = await openWidget(h(), browser, parley, model, () => tokensReleased);
        sites.push(widget.site);
        const { tab } = widget;

        await sendWithEnter(tab, "First");
        await sendWithEnter(tab, "Second");
        await tab.locator(".parley-user", { hasText: "Second" }).waitFor();
        releaseTokens();
        await tab.waitForFunction(
          () => Array.from(document.querySelectorAll(".parley-agent"), (node) => node.textContent).join("|") === "Reply to First|Reply to Second",
          undefined,
          { timeout: 15_000 },
        );

        assert.equal(widget.site.tokens.length, 1);
        const bearer = `Bearer ${widget.site.tokens[0] ?? ""}`;
        const chats = (await widget.exchanges()).filter((exchange) => exchange.path === "/chat");
        assert.deepEqual(
          chats.map(({ status, authorization }) => [status, authorization]),
          [
            [200, bearer],
            [200, bearer],
          ],
        );
        assert.deepEqual(widget.consoleErrors, []);
        await tab.close();
      });
    }, { only: "pglite" },
  );

  forEachDatabase(
    "chat with thread tokens that live five seconds",
    (h) => {
      let parley = "";
      before(async () => {
        parley = await h().server.listen({ port: 0, host: "127.0.0.1" });
      });

      test("the widget asks the page for a new token when its token is about to expire and when Parley refuses it, and the chat goes on", async () => {
        const { browser, model } = ready();
        model.setBehaviour([{ chunks: ["First ", "reply."] }, { chunks: ["Second ", "reply."] }, { chunks: ["Third ", "reply."] }]);
        const widget = await openWidget(h(), browser, parley, model);
        sites.push(widget.site);
        const { tab } = widget;

        await sendWithEnter(tab, "One");
        await waitForReply(tab, "First reply.");
        // Five seconds is less than the minute the widget wants left on a token: it asks for a new one first.
        await sendWithEnter(tab, "Two");
        await waitForReply(tab, "Second reply.");
        assert.equal(widget.site.tokens.length, 2);

        // The visitor's clock is an hour slow, so the widget takes the second token for fresh; once it has expired,
        // Parley refuses it, and the widget must ask for a new one and send the message again.
        const second = widget.site.tokens[1] ?? "";
        await tab.clock.setSystemTime(Date.now() - 3_600_000);
        const readWithSecond = { method: "GET" as const, url: `/threads/${widget.threadId}/messages`, headers: { authorization: `Bearer ${second}` } };
        await pollUntil(
          async () => (await h().request(readWithSecond)).status,
          (status) => status === 401,
          { what: "the second token to expire", timeoutMs: 15_000, intervalMs: 200 },
        );
        await sendWithEnter(tab, "Three");
        await waitForReply(tab, "Third reply.");
        await tab.screenshot({ path: path.join(artifacts, "widget-chat-token-refresh.png") });

        const [first, , third] = widget.site.tokens.map((token) => `Bearer ${token}`);
        assert.equal(new Set(widget.site.tokens).size, 3, "three different tokens");
        const chats = (await widget.exchanges()).filter((exchange) => exchange.path === "/chat");
        assert.deepEqual(
          chats.map(({ status, authorization }) => [status, authorization]),
          [
            [200, first],
            [200, `Bearer ${second}`],
            [401, `Bearer ${second}`],
            [200, third],
          ],
        );
        assert.deepEqual(
          (await widget.history()).map(({ message }) => message),
          ["One", "First reply.", "Two", "Second reply.", "Three", "Third reply."],
        );
        // Chromium reports the refused request on the console; nothing else went wrong.
        assert.deepEqual(
          widget.consoleErrors.map((error) => (/status of 401/.test(error) ? "401" : error)),
          ["401"],
        );
        await tab.close();
      });
    }, { env: { THREAD_TOKEN_TTL_SECONDS: "5" }, only: "pglite" },
  );
});
