import assert from "node:assert/strict";
import { mkdir } from "node:fs/promises";
import { after, before, test } from "node:test";
import { chromium, type Browser, type Page } from "playwright-core";
import { Parley, type CallDetail, type ProjectConfig } from "../../packages/client/src/index.js";
import { startFakeOpenAi, type FakeLlmServer } from "../support/fake-llm-servers.js";
import { startToolReceiver } from "../support/tool-receiver.js";
import { acmeAgent } from "../support/fixtures.js";
import { adminKey, forEachDatabase } from "../support/harness.js";

/**
 * Runs in the page (as text, so that the test compiler's helpers do not leak into it): every element with text of its
 * own whose WCAG contrast against its first opaque background falls below AA (4.5:1; 3:1 for large text).
 */
const lowContrastText = `(() => {
  const channels = (color) => (color.match(/[\\d.]+/g) || []).map(Number);
  const linear = (value) => { const c = value / 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
  const luminance = ([r, g, b]) => 0.2126 * linear(r) + 0.7152 * linear(g) + 0.0722 * linear(b);
  const background = (element) => {
    for (let node = element; node; node = node.parentElement) {
      const [r, g, b, a] = channels(getComputedStyle(node).backgroundColor);
      if (a === undefined || a >= 0.99) return [r, g, b];
    }
    return [255, 255, 255];
  };
  const found = [];
  for (const element of document.querySelectorAll("body *")) {
    const ownText = [...element.childNodes].some((node) => node.nodeType === Node.TEXT_NODE && node.textContent.trim() !== "");
    const box = element.getBoundingClientRect();
    if (!ownText || box.width === 0 || box.height === 0) continue;
    const style = getComputedStyle(element);
    if (style.visibility === "hidden" || Number(style.opacity) === 0) continue;
    const fore = luminance(channels(style.color));
    const back = luminance(background(element));
    const ratio = (Math.max(fore, back) + 0.05) / (Math.min(fore, back) + 0.05);
    const size = parseFloat(style.fontSize);
    const large = size >= 24 || (size >= 18.66 && Number(style.fontWeight) >= 700);
    if (ratio < (large ? 3 : 4.5)) found.push(element.tagName.toLowerCase() + "." + element.className + " " + JSON.stringify(element.textContent.trim().slice(0, 30)) + " " + ratio.toFixed(2) + ":1");
  }
  return found;
})()`;


/** Screenshots of every screen, for people to look at (gitignored). */
const artifacts = new URL("../../test-artifacts/console/", import.meta.url).pathname;
const chromiumPath = process.env["CHROMIUM_PATH"] ?? "/usr/bin/chromium";

const supportProject: ProjectConfig = {
  agent: { ...acmeAgent, provider: "builtin" },
  pricing: { message_usd: 0.002, voice_minute_usd: 0.05 },
  voice: {
    accounts: [{ id: "6f1f6c43-3b8f-4d9e-9a57-2f0c4f1b7a01", phone_numbers: ["+14155550100"] }],
    analysis_fields: [{ name: "asked_about_hours", type: "boolean", description: "Did the caller ask about opening hours?" }],
    inbound: { enabled: true },
    simulated: { script: ["Hello?", "What are your opening hours?", "Great, thanks. Bye."], ring_ms: 20, turn_ms: 30 },
  },
};

async function waitForProcessedCall(parley: Parley, callId: string): Promise<CallDetail> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const call = await parley.calls.get(callId);
    if (call.status === "ended" && call.call_analysis !== null && call.recording_url !== null) return call;
    if (call.status === "error" || Date.now() > deadline) throw new Error(`the simulated call did not end well: ${JSON.stringify(call)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

// On both databases: the live pages ride on the events notifications, which PGlite and PostgreSQL deliver differently.
forEachDatabase("the console in headless Chromium", (h) => {
  let browser: Browser;
  let page: Page;
  let baseUrl = "";
  let apiKey = "";
  let threadId = "";
  let call: CallDetail;
  let slowProjectId = "";
  let model: FakeLlmServer;
  let organizationId = "";
  let supportProjectId = "";
  let callThread = "";
  /** The thread of the caller who rang the support project twice, found by their number. */
  let inboundThread = "";
  /** A thread whose agent called tools. */
  let toolThread = "";
  const toolSecret = "console-tool-secret-0123456789";
  const inboundCaller = "+14155550199";
  /** Every response of 400 or more the pages got: none is expected (a missing favicon was one). */
  const failedResponses: string[] = [];
  const shoot = (name: string) => page.screenshot({ path: `${artifacts}${name}.png`, fullPage: true });

  before(async () => {
    await mkdir(artifacts, { recursive: true });
    model = await startFakeOpenAi({ chunks: ["Streaming ", "one ", "word ", "at ", "a ", "time."], chunkDelayMs: 120 });
    baseUrl = await h().server.listen({ port: 0, host: "127.0.0.1" });
    const admin = new Parley({ baseUrl, adminKey });
    const organization = await admin.admin.createOrganization("Console org");
    apiKey = organization.api_key;
    organizationId = organization.id;
    const project = await admin.admin.createProject(organization.id, "support", supportProject);
    supportProjectId = project.id;
    const slow = await admin.admin.createProject(organization.id, "slow-calls", {
      ...supportProject,
      voice: { ...supportProject.voice, simulated: { script: ["Hello?", "What are your opening hours?", "Where is the office located?", "Bye."], ring_ms: 300, turn_ms: 400 } },
    });
    slowProjectId = slow.id;
    await admin.admin.createProject(organization.id, "paced", { agent: { provider: "openai", model: "fake", base_url: model.url, api_key: "sk-fake" } });
    const parley = new Parley({ baseUrl, credential: apiKey });
    threadId = (await parley.threads.create({ project_name: "support", alias: "long-history" })).thread_id;
    for (let turn = 1; turn <= 25; turn++) {
      const question = turn === 3 ? "Where is the office located? (needle)" : `Question ${turn}: what are your opening hours?`;
      await parley.chat.send({ thread_id: threadId, message: question, service_config_name: "support" });
    }
    callThread = (await parley.threads.create({ alias: "caller" })).thread_id;
    const created = await parley.voice.phoneCall(callThread, { callee: "+14155552671", project_id: project.id });
    call = await waitForProcessedCall(parley, created.id);
    browser = await chromium.launch({
      executablePath: chromiumPath,
      args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--autoplay-policy=no-user-gesture-required"],
    });
    page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
    page.on("response", (response) => {
      if (response.status() >= 400) failedResponses.push(`${response.status()} ${response.request().method()} ${response.url()}`);
    });
  });
  after(async () => {
    await browser?.close();
    await model?.close();
  });

  test("signing in with an API key shows the threads, newest first", async () => {
    await page.goto(`${baseUrl}/console`);
    await page.getByLabel("API key").fill("sk_wrong");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("alert").waitFor();
    assert.match(await page.getByRole("alert").innerText(), /401/);
    await page.getByLabel("API key").fill(apiKey);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Threads" }).waitFor();
    const rows = page.locator("tbody tr");
    await rows.first().waitFor();
    // Each thread by its first user words, its alias below; then last activity, project, type in words, activity.
    assert.deepEqual(await rows.locator(".thread-name").allInnerTexts(), ["“Hello?”", "“Question 1: what are your opening hours?”"]);
    assert.deepEqual(await rows.locator(".thread-cell small").allInnerTexts(), ["caller", "long-history"]);
    assert.deepEqual(await rows.locator("td:nth-child(4)").allInnerTexts(), ["Conversation", "Conversation"]);
    assert.equal(await rows.locator("td:nth-child(4) .label").first().getAttribute("title"), "NORMAL");
    assert.match(await rows.nth(0).locator("td:nth-child(5)").innerText(), /^\d+ messages · 1 call · (< 1|\d+) s on calls$/);
    assert.equal(await rows.nth(1).locator("td:nth-child(5)").innerText(), "50 messages");
    assert.equal(await rows.nth(1).locator("td:nth-child(3)").innerText(), "support");
    assert.match(await rows.nth(1).locator("td:nth-child(2)").innerText(), /just now|min ago/);
    assert.equal(await page.evaluate(() => sessionStorage.getItem("parley.console.apiKey")), apiKey);
    assert.deepEqual(failedResponses.splice(0), [`401 GET ${baseUrl}/threads?limit=1`], "the wrong key's refusal, and nothing else");
    await shoot("01-threads");
  });

  test("the thread filters live in the URL: a shared or reloaded link shows the same list", async () => {
    await page.getByLabel("Type").selectOption("SIMULATION");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.getByText("No thread matches these filters.").waitFor();
    assert.match(page.url(), /#\/(threads)?\?type=SIMULATION$/);
    await page.getByLabel("Project", { exact: true }).fill("support");
    await page.getByLabel("Type").selectOption("NORMAL");
    await page.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL(/project_name=support&type=NORMAL/);
    await page.reload();
    await page.locator("tbody tr").first().waitFor();
    assert.equal(await page.getByLabel("Project", { exact: true }).inputValue(), "support");
    assert.equal(await page.getByLabel("Type").inputValue(), "NORMAL");
    // Both threads have a conversation in "support" (the caller's is its call's).
    assert.deepEqual(await page.locator(".thread-cell small").allInnerTexts(), ["caller", "long-history"]);
    // Back goes to the previous filters, as a browser's history should.
    await page.goBack();
    await page.getByText("No thread matches these filters.").waitFor();
    assert.equal(await page.getByLabel("Type").inputValue(), "SIMULATION");
  });

  test("a voice thread shows its calls, its voice usage, and links each call's conversation to its call", async () => {
    await page.goto(`${baseUrl}/console#/threads/${callThread}`);
    const callLinks = page.locator(".history .message .meta a");
    await callLinks.first().waitFor();
    assert.equal(await callLinks.first().getAttribute("href"), `#/calls/${call.id}`);
    assert.match(await callLinks.first().innerText(), /^Call, conversation \d+$/);
    assert.equal(await page.locator(".history .message").count(), await callLinks.count(), "every spoken message links to its call");
    const usage = await page.locator(".usage").innerText();
    assert.match(usage, /Voice time\s*(< 1|\d+) s/);
    assert.match((await page.locator(".usage dd").first().getAttribute("title")) ?? "", /^\d+(\.\d+)? minutes$/);
    assert.doesNotMatch(usage, /Billable messages/);
    const calls = page.locator("section[aria-labelledby=thread-calls-title] tbody tr");
    assert.equal(await calls.count(), 1);
    assert.match(await calls.innerText(), /Phone call · Outbound\s+Ended\s+\+14155550100 → \+14155552671\s+\d+ s\s+Caller hung up\s+Conversation 1/);
    await shoot("02b-voice-thread");
    await calls.locator("a").first().click();
    await page.getByTestId("call-status").waitFor();
    assert.match(page.url(), new RegExp(`#/calls/${call.id}$`));
    await page.goto(`${baseUrl}/console#/threads`);
    await page.locator("tbody tr").first().waitFor();
  });

  test("a thread's history scrolls back through the cursors", async () => {
    await page.getByRole("link", { name: /Question 1:/ }).click();
    const messages = page.locator(".history .message");
    await messages.first().waitFor();
    assert.equal(await messages.count(), 20);
    assert.match(await page.locator(".usage").innerText(), /Billable messages\s*25/);
    await shoot("02-thread");
    await page.locator(".history").evaluate((box) => (box.scrollTop = 0));
    await page.waitForFunction(() => document.querySelectorAll(".history .message").length === 40);
    await page.locator(".history").evaluate((box) => (box.scrollTop = 0));
    await page.waitForFunction(() => document.querySelectorAll(".history .message").length === 50);
    await page.getByText("Start of the thread").waitFor();
    assert.equal(await messages.first().locator(".text").innerText(), "Question 1: what are your opening hours?");
  });

  test("search jumps to a match shown in its context", async () => {
    await page.goto(`${baseUrl}/console#/threads/${threadId}`);
    await page.locator(".history .message").first().waitFor();
    await page.getByLabel("Text in this thread").fill("NEEDLE");
    await page.getByRole("button", { name: "Search", exact: true }).click();
    // The match shows who said it and when, with the words searched for marked (whatever their case).
    const result = page.locator(".search .matches li");
    await result.waitFor();
    assert.equal(await result.locator("mark").innerText(), "needle");
    assert.match(await result.locator(".match-meta").innerText(), /^User · \S.*\d/);
    assert.ok(await result.locator(".match-meta time").getAttribute("datetime"));
    await page.getByRole("button", { name: /Jump to/ }).click();
    const highlighted = page.locator(".message.highlighted");
    await highlighted.waitFor();
    assert.equal(await highlighted.locator(".text").innerText(), "Where is the office located? (needle)");
    assert.equal(await highlighted.getAttribute("aria-current"), "true");
    // Two messages of context either side; the window is shorter than the box, so the page before it (the thread's
    // first two messages) is fetched at once, and the cursor after it waits for a click.
    await page.waitForFunction(() => document.querySelectorAll(".history .message").length === 7);
    assert.equal(await page.locator(".history .message .text").first().innerText(), "Question 1: what are your opening hours?");
    assert.ok(await highlighted.isVisible());
    await page.getByRole("button", { name: "Load newer messages" }).waitFor();
    await shoot("03-search-jump");
    // The search and the match jumped to are in the URL: a reload opens the same match in its context.
    const matchId = await highlighted.getAttribute("data-message-id");
    assert.ok(page.url().endsWith(`#/threads/${threadId}?q=NEEDLE&at=${matchId}`), page.url());
    await page.reload();
    await page.locator(".message.highlighted").waitFor();
    assert.equal(await page.locator(".message.highlighted .text").innerText(), "Where is the office located? (needle)");
    assert.equal(await page.getByLabel("Text in this thread").inputValue(), "NEEDLE");
    await page.getByRole("button", { name: "Load newer messages" }).click();
    await page.waitForFunction(() => document.querySelectorAll(".history .message").length === 27);
  });

  test("chat streams the reply into the page token by token", async () => {
    await page.getByRole("button", { name: "Jump to latest" }).click();
    await page.getByLabel("Project").fill("paced");
    await page.getByLabel("Message", { exact: true }).fill("Tell me something slowly");
    // Every text the streaming bubble shows, recorded in the page as it changes.
    await page.evaluate(() => {
      const seen: string[] = [];
      (window as unknown as { streamed: string[] }).streamed = seen;
      new MutationObserver(() => {
        const text = document.querySelector('[data-testid="streaming-reply"]')?.textContent;
        if (text && text !== "…" && seen.at(-1) !== text) seen.push(text);
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    });
    await page.getByLabel("Message", { exact: true }).press("Enter");
    await page.locator(".history .message.assistant", { hasText: "Streaming one word at a time." }).waitFor();
    const streamed = await page.evaluate(() => (window as unknown as { streamed: string[] }).streamed);
    assert.ok(streamed.length >= 3, `saw ${JSON.stringify(streamed)}`);
    for (const partial of streamed) assert.ok("Streaming one word at a time.".startsWith(partial), partial);
    assert.equal(await page.locator(".history .message", { hasText: "Tell me something slowly" }).count(), 1);
    await shoot("04-chat");
  });

  test("a message stored elsewhere appears in the open thread from the events WebSocket", async () => {
    await page.evaluate(() => ((window as unknown as { sameDocument: boolean }).sameDocument = true));
    await new Parley({ baseUrl, credential: apiKey }).chat.send({ thread_id: threadId, message: "Sent from another client", service_config_name: "support" });
    await page.locator(".history .message", { hasText: "Sent from another client" }).waitFor();
    await page.locator(".usage", { hasText: "27" }).waitFor();
    assert.equal(await page.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument), true, "the page was not reloaded");
  });

  test("the call list filters, and a call's transcript lights word by word as its recording plays", async () => {
    await page.getByRole("link", { name: "Calls" }).click();
    await page.locator("tbody tr").first().waitFor();
    await page.getByRole("checkbox", { name: "Web call" }).check();
    await page.getByRole("button", { name: "Filter" }).click();
    await page.getByText("No calls match.").waitFor();
    await page.getByRole("checkbox", { name: "Web call" }).uncheck();
    await page.getByRole("checkbox", { name: "Phone call" }).check();
    await page.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL(/#\/calls\?call_type=phone_call$/);
    await page.reload();
    await page.locator("tbody tr").first().waitFor();
    assert.ok(await page.getByRole("checkbox", { name: "Phone call" }).isChecked(), "the filter survives a reload");
    const row = page.locator("tbody tr").first();
    assert.equal(await row.locator(".label[title=phone_call]").innerText(), "Phone call");
    assert.equal(await row.locator(".label[title=user_hangup], .label[title=agent_hangup]").count(), 1);
    await shoot("05-calls");
    await page.locator("tbody tr a").first().click();
    await page.locator(".word").first().waitFor();
    assert.equal(await page.getByTestId("call-status").innerText(), "Ended");
    assert.equal(await page.getByTestId("call-status").getAttribute("title"), "ended");
    const reason = page.getByTestId("disconnection-reason").locator(".label");
    assert.equal(await reason.getAttribute("title"), call.disconnection_reason);
    assert.doesNotMatch(await reason.innerText(), /_/);
    // Each turn starts with its time in the recording, and reads as written: "What are your opening hours?".
    const turns = call.transcript_object ?? [];
    assert.deepEqual(await page.locator(".utterance .turn-time").allInnerTexts(), turns.map((turn) => `0:${String(Math.floor(turn.words[0]!.start)).padStart(2, "0")}`));
    // start_timestamp is in Unix seconds.
    assert.match(await page.locator(".facts div", { hasText: "Started" }).innerText(), new RegExp(String(new Date(call.start_timestamp! * 1000).getFullYear())));
    const question = page.locator(".utterance", { hasText: "opening hours" }).first().locator(".words");
    assert.match(await question.innerText(), /What are your opening hours\?/);
    const words = call.transcript_object?.flatMap((utterance) => utterance.words) ?? [];
    assert.equal(await page.locator(".word").count(), words.length);
    assert.match(await page.locator(".facts").last().innerText(), /asked_about_hours/);

    await page.locator("audio").evaluate((audio: HTMLAudioElement) => audio.play());
    const litStart = () => page.locator(".word.current").getAttribute("data-start").then(Number);
    await page.locator(".word.current").waitFor();
    const first = await litStart();
    await page.waitForFunction((start) => Number(document.querySelector(".word.current")?.getAttribute("data-start")) > start + 0.5, first, { timeout: 10_000 });
    const later = await litStart();
    assert.ok(later > first, `the highlight moved from ${first}s to ${later}s`);
    const time = await page.locator("audio").evaluate((audio: HTMLAudioElement) => audio.currentTime);
    const expected = words.filter((word) => word.start <= time).at(-1);
    assert.ok(expected && Math.abs(expected.start - (await litStart())) < 1.5, "the lit word is the one being played");
    await page.locator("audio").evaluate((audio: HTMLAudioElement) => audio.pause());
    await shoot("06-call");
  });

  test("a live call's page follows the call from the events WebSocket until its transcript and analysis arrive", async () => {
    const parley = new Parley({ baseUrl, credential: apiKey });
    const liveThread = (await parley.threads.create({ alias: "live-caller" })).thread_id;
    const created = await parley.voice.phoneCall(liveThread, { callee: "+14155552671", project_id: slowProjectId });
    await page.goto(`${baseUrl}/console#/calls/${created.id}`);
    const status = page.getByTestId("call-status");
    await status.waitFor();
    assert.notEqual(await status.innerText(), "ended", "the page opened before the call ended");
    await page.evaluate(() => ((window as unknown as { sameDocument: boolean }).sameDocument = true));
    await page.locator(".transcript-text, .word").first().waitFor({ timeout: 30_000 });
    await page.locator('[data-testid="call-status"]', { hasText: "Ended" }).waitFor({ timeout: 30_000 });
    await page.locator(".word").first().waitFor({ timeout: 30_000 });
    await page.getByText("Summary").waitFor({ timeout: 30_000 });
    assert.equal(await page.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument), true, "the page was not reloaded");
  });

  test("an agent's turn shows its tool calls: each by name, with its status in words, arguments, result and duration", async () => {
    const receiver = await startToolReceiver(toolSecret);
    const toolModel = await startFakeOpenAi();
    try {
      const orderParameters = { type: "object", properties: { order: { type: "string" } }, required: ["order"] };
      await new Parley({ baseUrl, adminKey }).admin.createProject(organizationId, "tools", {
        agent: {
          provider: "openai", model: "fake", base_url: toolModel.url, api_key: "sk-fake", tool_secret: toolSecret,
          tools: [
            { name: "get_order", description: "Looks an order up.", parameters: orderParameters, url: `${receiver.url}/json` },
            { name: "book_visit", description: "Books a visit.", parameters: orderParameters, url: `${receiver.url}/fail` },
          ],
        },
      });
      toolModel.setBehaviour([
        { toolCalls: [{ name: "get_order", arguments: { order: "A1" } }, { name: "book_visit", arguments: { order: "A1" } }] },
        { chunks: ["Your order A1 has shipped; I could not book the visit."] },
      ]);
      const parley = new Parley({ baseUrl, credential: apiKey });
      toolThread = (await parley.threads.create({ project_name: "tools", alias: "tool-user" })).thread_id;
      await parley.chat.send({ thread_id: toolThread, message: "Where is my order A1, and can you book a visit?", service_config_name: "tools" });

      await page.goto(`${baseUrl}/console#/threads/${toolThread}`);
      const calls = page.locator(".history .message.assistant .tool-call");
      await calls.nth(1).waitFor();
      assert.deepEqual(await calls.locator("summary code").allInnerTexts(), ["get_order", "book_visit"]);
      assert.deepEqual(await calls.locator(".tool-status").allInnerTexts(), ["Done", "Failed"]);
      assert.deepEqual(await calls.locator(".tool-status").evaluateAll((found) => found.map((status) => status.getAttribute("title"))), ["ok", "error"]);
      assert.match(await calls.first().locator("summary").innerText(), /· \d+ ms$/);
      await calls.first().locator("summary").click();
      await calls.nth(1).locator("summary").press("Enter");
      assert.match(await calls.first().locator("dd").first().innerText(), /"order": "A1"/);
      assert.match(await calls.first().locator("dd").last().innerText(), /"status": "shipped"/);
      assert.match(await calls.nth(1).locator("dd").last().innerText(), /HTTP status 500/);
      await shoot("04b-tool-calls");
    } finally {
      await receiver.close();
      await toolModel.close();
    }
  });

  test("inbound calls: the call list shows their direction and numbers, filtered by direction in the URL, and their thread shows both calls", async () => {
    const parley = new Parley({ baseUrl, credential: apiKey });
    const inbound: CallDetail[] = [];
    // One after the other: a caller still on the line when they ring again is refused (409).
    for (let ring = 0; ring < 2; ring++) {
      const answered = await parley.voice.simulatedInbound({ project_id: supportProjectId, from: inboundCaller });
      inbound.push(await waitForProcessedCall(parley, answered.id));
    }
    inboundThread = inbound[0]!.thread_id;
    assert.equal(inbound[1]!.thread_id, inboundThread, "one caller keeps one thread");

    await page.goto(`${baseUrl}/console#/calls`);
    await page.locator("tbody tr").first().waitFor();
    await page.getByRole("checkbox", { name: "Inbound" }).check();
    await page.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL(/#\/calls\?direction=inbound$/);
    await page.reload();
    const rows = page.locator("tbody tr");
    await rows.first().waitFor();
    assert.ok(await page.getByRole("checkbox", { name: "Inbound" }).isChecked(), "the filter survives a reload");
    assert.deepEqual(await rows.evaluateAll((found) => found.map((row) => row.getAttribute("data-call-id"))), [inbound[1]!.id, inbound[0]!.id]);
    for (const row of await rows.all()) {
      assert.equal(await row.locator("td:nth-child(2)").innerText(), "Phone call · Inbound");
      assert.equal(await row.locator("td:nth-child(2) .label").last().getAttribute("title"), "inbound");
      // From the caller to the project's number.
      assert.equal(await row.locator("td:nth-child(4)").innerText(), `${inboundCaller} → +14155550100`);
    }
    await shoot("05b-calls-inbound");

    await page.getByRole("checkbox", { name: "Inbound" }).uncheck();
    await page.getByRole("checkbox", { name: "Outbound" }).check();
    await page.getByRole("button", { name: "Filter" }).click();
    await page.waitForURL(/#\/calls\?direction=outbound$/);
    await page.locator(`tbody tr[data-call-id="${call.id}"]`).waitFor();
    assert.equal(await page.locator(`tbody tr[data-call-id="${inbound[0]!.id}"]`).count(), 0);
    assert.equal(await page.locator(`tbody tr[data-call-id="${call.id}"] td:nth-child(4)`).innerText(), "+14155550100 → +14155552671");
    await page.goto(`${baseUrl}/console#/calls`);
    await page.locator(`tbody tr[data-call-id="${inbound[1]!.id}"]`).waitFor();
    await shoot("05c-calls-both-directions");
    await page.goBack();

    // The caller's thread: both calls, each with the conversation it holds, and each conversation's messages link to its call.
    await page.goBack();
    await page.locator(`tbody tr[data-call-id="${inbound[0]!.id}"]`).getByRole("link", { name: "Thread" }).click();
    await page.getByRole("heading", { name: `Thread ${inboundCaller}` }).waitFor();
    const threadCalls = page.locator("section[aria-labelledby=thread-calls-title] tbody tr");
    await threadCalls.nth(1).waitFor();
    assert.deepEqual(await threadCalls.locator("td:nth-child(7)").allInnerTexts(), ["Conversation 2", "Conversation 1"]);
    assert.match(await threadCalls.first().innerText(), new RegExp(`Phone call · Inbound\\s+Ended\\s+\\${inboundCaller} → \\+14155550100`));
    const links = page.locator(".history .message .meta a");
    await links.first().waitFor();
    const linked = await links.evaluateAll((found) => found.map((link) => [link.textContent, link.getAttribute("href")]));
    assert.equal(linked.length, await page.locator(".history .message").count(), "every spoken message links to its call");
    for (const [text, href] of linked) {
      const conversation = Number(/conversation (\d+)/.exec(text ?? "")?.[1]);
      assert.equal(href, `#/calls/${inbound[conversation - 1]!.id}`, `${text} links to its own call`);
    }
    assert.deepEqual([...new Set(linked.map(([text]) => text))], ["Call, conversation 1", "Call, conversation 2"]);
    assert.match(await page.locator(".usage").innerText(), /Voice time/);
    await shoot("02c-inbound-thread");

    // The call's own page says who called which number.
    await threadCalls.last().getByRole("link").first().click();
    await page.getByTestId("call-status").waitFor();
    assert.equal(await page.locator("h1 .label").allInnerTexts().then((labels) => labels.join(" · ")), "Phone call · Inbound");
    assert.equal(await page.locator(".facts div", { hasText: /^From/ }).locator("dd").innerText(), inboundCaller);
    assert.equal(await page.locator(".facts div", { hasText: /^To/ }).locator("dd").innerText(), "+14155550100");
    await page.locator(".word").first().waitFor();
    assert.match(await page.locator(".utterance").first().innerText(), /^Agent\s+0:00\s+Welcome to Acme!$/);
  });

  test("the thread list finds a thread by its alias, in the URL, and says when no thread has it", async () => {
    await page.goto(`${baseUrl}/console#/threads`);
    await page.locator("tbody tr").first().waitFor();
    await page.getByLabel("Alias", { exact: true }).fill(inboundCaller);
    await page.getByRole("button", { name: "Find" }).click();
    await page.waitForURL((url) => url.hash === `#/threads?alias=${encodeURIComponent(inboundCaller)}`);
    await page.reload();
    const match = page.locator(".alias-match");
    await match.waitFor();
    assert.equal(await page.getByLabel("Alias", { exact: true }).inputValue(), inboundCaller, "the alias survives a reload");
    assert.equal(await match.getByRole("heading").innerText(), `Thread ${inboundCaller}`);
    assert.equal(await match.getByRole("link", { name: `Thread ${inboundCaller}` }).getAttribute("href"), `#/threads/${inboundThread}`);
    assert.match(await page.getByTestId("alias-facts").innerText(), /^2 calls · 0 billed messages · /);
    assert.deepEqual(await match.locator("tbody td:nth-child(2)").allInnerTexts(), ["Phone call · Inbound", "Phone call · Inbound"]);
    await shoot("01b-threads-by-alias");

    await page.getByLabel("Alias", { exact: true }).fill("+14155550000");
    await page.getByRole("button", { name: "Find" }).click();
    await page.getByText("No thread has the alias +14155550000.").waitFor();
    // The alias endpoint's 404 is the answer "no such thread", the one failed response expected here.
    const missing = failedResponses.findIndex((response) => response.endsWith("/threads/by-alias/%2B14155550000"));
    assert.ok(missing >= 0 && failedResponses[missing]!.startsWith("404 GET"), JSON.stringify(failedResponses));
    failedResponses.splice(missing, 1);
    await page.getByRole("link", { name: "All threads" }).click();
    await page.waitForURL(/#\/threads$/);
    await page.locator("tbody tr", { hasText: inboundCaller }).waitFor();
    await shoot("01c-threads-all");
  });

  test("what a call's record does not have yet reads 'Unknown', null in its tooltip; a cancelled call says so in words", async () => {
    const parley = new Parley({ baseUrl, credential: apiKey });
    const laterThread = (await parley.threads.create({ alias: "call-me-tomorrow" })).thread_id;
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString();
    const scheduled = await parley.voice.phoneCall(laterThread, { callee: "+14155552671", project_id: supportProjectId, scheduled_for: tomorrow });
    await page.goto(`${baseUrl}/console#/calls?status=scheduled`);
    const row = page.locator(`tbody tr[data-call-id="${scheduled.id}"]`);
    await row.waitFor();
    assert.equal(await page.locator("tbody tr").count(), 1);
    assert.equal(await row.locator("td:nth-child(3)").innerText(), "Scheduled");
    for (const column of [5, 6]) {
      const cell = row.locator(`td:nth-child(${column}) .label`);
      assert.equal(await cell.innerText(), "Unknown");
      assert.equal(await cell.getAttribute("title"), "null");
    }
    await row.getByRole("link").first().click();
    await page.getByTestId("call-status").waitFor();
    assert.equal(await page.getByTestId("call-status").innerText(), "Scheduled");
    assert.match(await page.locator(".facts div", { hasText: /^Scheduled for/ }).innerText(), new RegExp(String(new Date(tomorrow).getFullYear())));
    for (const fact of [/^Started/, /^Duration/, /^Ended because/]) {
      assert.equal(await page.locator(".facts div", { hasText: fact }).locator("dd").innerText(), "Unknown", String(fact));
    }
    assert.equal(await page.locator(".facts div", { hasText: /^Ended because/ }).locator(".label").getAttribute("title"), "null");
    await shoot("06b-scheduled-call");

    // Cancelled: the page follows the call's events to its end, and the reason reads as words.
    await parley.voice.endPhoneCall(laterThread);
    await page.locator('[data-testid="call-status"]', { hasText: "Ended" }).waitFor();
    const reason = page.getByTestId("disconnection-reason").locator(".label");
    await page.getByTestId("disconnection-reason").getByText("Cancelled before it started").waitFor();
    assert.equal(await reason.getAttribute("title"), "cancelled");
  });

  test("a simulation run from the page shows its turns and evaluation", async () => {
    await page.getByRole("link", { name: "Simulations" }).click();
    // Examples read as examples, not as values already filled in.
    assert.equal(await page.getByLabel("Topic").getAttribute("placeholder"), "e.g. opening hours");
    assert.equal(await page.getByLabel("Topic").inputValue(), "");
    // The grid is even: in every group the narrow fields come in pairs sharing their row, and the wide ones span it.
    for (const group of await page.locator(".form-group").all()) {
      const boxes = await group.locator(".field").evaluateAll((fields) => fields.map((field) => ({ wide: field.classList.contains("wide"), top: Math.round(field.getBoundingClientRect().top), width: Math.round(field.getBoundingClientRect().width) })));
      const narrow = boxes.filter((box) => !box.wide);
      assert.equal(narrow.length % 2, 0, `a narrow field alone on its row: ${JSON.stringify(boxes)}`);
      for (let index = 0; index < narrow.length; index += 2) assert.equal(narrow[index]!.top, narrow[index + 1]!.top, JSON.stringify(boxes));
      assert.equal(new Set(narrow.map((box) => box.width)).size, 1, JSON.stringify(boxes));
    }
    await page.getByLabel("Project", { exact: true }).fill("support");
    await page.getByRole("button", { name: "Run simulation" }).click();
    await page.locator(".verdict").waitFor();
    assert.ok((await page.locator("main .messages .message").count()) >= 2);
    assert.match(await page.locator(".verdict").innerText(), /^(PASS|FAIL) · score \d\.\d\d · judge: \w+$/);
    // Roles, sources, the stop reason and the criteria read as words, their codes in the tooltip.
    assert.equal(await page.locator("main .messages .message .meta").first().innerText(), "User · First message");
    assert.equal(await page.locator("main .messages .message.assistant .meta").first().innerText(), "Agent");
    const stopReason = page.getByTestId("stop-reason").locator(".label");
    assert.doesNotMatch(await stopReason.innerText(), /_/);
    assert.match((await stopReason.getAttribute("title")) ?? "", /^(max_turns|user_ended|agent_ended)$/);
    assert.equal(await page.locator(".label[title=task_completion]").innerText(), "Task completed");
    // The topic was left empty: the evaluation says so, rather than calling the first message the topic.
    const onTopic = page.locator("tr", { has: page.locator(".label[title=stays_on_topic]") });
    assert.match(await onTopic.innerText(), /the opening message \("Hi, I have a question\."; no topic was given\)/);
    assert.doesNotMatch(await onTopic.innerText(), /the topic \(/);
    await shoot("07-simulate");
  });

  test("the admin screens list organizations, keys and projects to pick from; keys rotate and revoke from the list", async () => {
    await page.getByRole("link", { name: "Admin" }).click();
    await page.getByLabel("Admin key").fill(adminKey);
    await page.getByRole("button", { name: "Use admin key" }).click();
    await page.getByLabel("New organization name").fill("Made in the console");
    await page.getByRole("button", { name: "Create organization" }).click();
    const shown = await page.getByTestId("shown-once").innerText();
    assert.match(shown, /^sk_/);
    assert.equal((await new Parley({ baseUrl, credential: shown }).threads.list()).threads.length, 0);
    // The new organization is picked: its one key is listed, redacted, and the URL names it.
    await page.getByRole("heading", { name: "Made in the console" }).waitFor();
    const keys = page.locator("section[aria-labelledby=keys-title] tbody tr");
    await keys.first().waitFor();
    assert.equal(await keys.count(), 1);
    assert.equal(await keys.locator("code").innerText(), `sk_…${shown.slice(-4)}`);
    assert.match(page.url(), /#\/admin\?org=[0-9a-f-]{36}$/);

    await page.getByRole("button", { name: /^Rotate sk_/ }).click();
    await page.getByText(/rotated: the new key is shown once above/).waitFor();
    const rotated = await page.getByTestId("shown-once").innerText();
    assert.notEqual(rotated, shown);
    await page.locator("section[aria-labelledby=keys-title] tbody tr", { hasText: "Revoked" }).waitFor();
    assert.equal(await keys.count(), 2);
    await assert.rejects(new Parley({ baseUrl, credential: shown }).threads.list(), /401/);
    assert.equal((await new Parley({ baseUrl, credential: rotated }).threads.list()).threads.length, 0);
    page.once("dialog", (dialog) => void dialog.accept());
    await page.getByRole("button", { name: `Revoke sk_…${rotated.slice(-4)}` }).click();
    await page.getByText(`sk_…${rotated.slice(-4)} revoked.`).waitFor();
    await assert.rejects(new Parley({ baseUrl, credential: rotated }).threads.list(), /401/);
    await shoot("08-admin-keys");

    // An organization without projects offers to create one; the new project is listed and opened.
    await page.getByLabel("Project name").fill("made-here");
    await page.getByRole("button", { name: "Create project" }).click();
    await page.getByRole("heading", { name: "Project made-here" }).waitFor();
    await page.getByText("Project made-here created.").waitFor();
    assert.equal(await page.getByRole("button", { name: "made-here" }).getAttribute("aria-current"), "true");
    assert.match(page.url(), /#\/admin\?org=[0-9a-f-]{36}&project=[0-9a-f-]{36}$/);
  });

  test("a project's versions: publish says so, two versions compare setting by setting, and an earlier one is published again", async () => {
    await page.goto(`${baseUrl}/console#/admin?org=${organizationId}`);
    await page.getByRole("button", { name: "support", exact: true }).click();
    await page.getByRole("heading", { name: "Project support" }).waitFor();
    assert.ok(page.url().endsWith(`#/admin?org=${organizationId}&project=${supportProjectId}`));
    const versions = page.locator("table", { has: page.getByText("Configuration versions, oldest first") }).locator("tbody tr");
    assert.equal(await versions.count(), 1);
    const editor = page.getByLabel(/Configuration \(JSON; write-only/);
    const config = JSON.parse(await editor.inputValue()) as { agent: { greeting?: string } };
    const firstGreeting = config.agent.greeting;
    config.agent.greeting = "Published from the console";
    await editor.fill(JSON.stringify(config));
    await page.getByRole("button", { name: "Publish as a new version" }).click();
    const published = page.locator("form", { has: page.getByRole("button", { name: "Publish as a new version" }) }).getByRole("status");
    await published.waitFor();
    assert.match(await published.innerText(), /^✓ Published version 2 \([0-9a-f-]{36}\); new conversations use it now\.$/);
    assert.equal(await versions.count(), 2);
    assert.match(await editor.inputValue(), /Published from the console/);

    await page.getByRole("button", { name: "Show changes" }).click();
    const changes = page.locator(".diff tbody tr");
    await changes.first().waitFor();
    assert.deepEqual(await changes.allInnerTexts(), [`agent.greeting\t${JSON.stringify(firstGreeting)}\t"Published from the console"`]);
    await shoot("09-admin-versions");

    await versions.filter({ hasText: /^1/ }).getByRole("button", { name: "Publish again as new" }).click();
    await page.getByText("Version 1 published again as version 3, now the current one.").waitFor();
    assert.equal(await versions.count(), 3);
    assert.match(await versions.nth(2).innerText(), /3 current/);
    const current = (await new Parley({ baseUrl, adminKey }).admin.getProject(supportProjectId)) as { config: { agent: { greeting: string } } };
    assert.equal(current.config.agent.greeting, firstGreeting);
  });

  test("the console is usable from the keyboard alone", async () => {
    await page.goto("about:blank");
    await page.goto(`${baseUrl}/console#/threads`);
    await page.locator("tbody tr").first().waitFor();
    await page.keyboard.press("Tab");
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), "Skip to content");
    await page.keyboard.press("Tab");
    await page.keyboard.press("Tab");
    assert.equal(await page.evaluate(() => document.activeElement?.textContent), "Calls");
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "Calls" }).waitFor();
    // Into the thread from its link, then the history box takes focus and scrolls with the keys.
    await page.goto(`${baseUrl}/console#/threads`);
    await page.getByRole("link", { name: /Question 1:/ }).focus();
    await page.keyboard.press("Enter");
    await page.locator(".history .message").first().waitFor();
    await page.locator(".history").focus();
    const before = await page.locator(".history").evaluate((box) => box.scrollTop);
    await page.keyboard.press("PageUp");
    await page.waitForFunction((top) => (document.querySelector(".history")?.scrollTop ?? top) < top, before);
  });

  test("at phone width nothing overflows sideways and every input has a label", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    for (const route of [`#/threads/${threadId}`, `#/threads/${callThread}`, `#/threads/${inboundThread}`, `#/threads/${toolThread}`, "#/calls?direction=inbound", `#/calls/${call.id}`, "#/threads", `#/threads?alias=${encodeURIComponent(inboundCaller)}`, "#/simulate", `#/admin?org=${organizationId}&project=${supportProjectId}`]) {
      await page.goto(`${baseUrl}/console${route}`);
      await page.locator("main h1").first().waitFor();
      await page.waitForTimeout(300);
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      assert.ok(overflow <= 1, `${route} overflows by ${overflow}px`);
      const unlabelled = await page.evaluate(() =>
        [...document.querySelectorAll("input, select, textarea")].filter((element) => !(element as HTMLInputElement).labels?.length && !element.getAttribute("aria-label")).length,
      );
      assert.equal(unlabelled, 0, `${route} has inputs without labels`);
    }
    await page.goto(`${baseUrl}/console#/threads/${threadId}`);
    await page.locator(".history .message").first().waitFor();
    await shoot("10-phone-thread");
    await page.goto(`${baseUrl}/console#/calls?direction=inbound`);
    await page.locator("tbody tr").first().waitFor();
    await shoot("10b-phone-calls");
    await page.goto(`${baseUrl}/console#/threads`);
    await page.locator("tbody tr").first().waitFor();
    await shoot("10c-phone-threads");
    await page.goto(`${baseUrl}/console#/admin?org=${organizationId}&project=${supportProjectId}`);
    await page.getByRole("heading", { name: "Project support" }).waitFor();
    await shoot("11-phone-admin");
  });

  test("text contrasts with its background at WCAG AA (4.5:1, 3:1 for large text) on every screen", async () => {
    await page.setViewportSize({ width: 1280, height: 860 });
    for (const route of [`#/threads/${threadId}?q=needle`, `#/threads/${callThread}`, `#/threads/${inboundThread}`, `#/threads/${toolThread}`, "#/threads", `#/threads?alias=${encodeURIComponent(inboundCaller)}`, "#/calls", `#/calls/${call.id}`, "#/simulate", `#/admin?org=${organizationId}&project=${supportProjectId}`]) {
      await page.goto(`${baseUrl}/console${route}`);
      await page.locator("main h1").first().waitFor();
      await page.waitForTimeout(300);
      const failures = await page.evaluate<string[]>(lowContrastText);
      assert.deepEqual(failures, [], `${route} has text below AA contrast`);
    }
  });

  test("no page asked for something that is not there (the favicon was a 404)", async () => {
    const iconWidth = await page.evaluate(
      () => new Promise<number>((resolve) => {
        const image = new Image();
        image.onload = () => resolve(image.naturalWidth);
        image.onerror = () => resolve(-1);
        image.src = "/favicon.ico";
      }),
    );
    assert.equal(iconWidth, 32);
    assert.deepEqual(failedResponses, []);
  });
});