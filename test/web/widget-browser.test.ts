import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { before, after, test } from "node:test";
import { chromium, type Browser } from "playwright-core";
import { encodeWav } from "../../src/providers/voice/wav.js";
import { concatSamples, espeakCli, silence, wordsOf } from "../support/speech-audio.js";
import { audioVoiceSettings, forEachVoiceDatabase, listen, voiceConfig, waitForCall } from "../voice-calls/support.js";

const artifacts = path.resolve("test/artifacts");

/**
 * The widget in real headless Chromium, on a page of another origin than Parley's, with a fake microphone that plays
 * a question spoken by espeak-ng: the call must hear it, answer from the project's knowledge, and speak back.
 */
forEachVoiceDatabase(
  "the browser widget in headless Chromium",
  (h) => {
    let browser: Browser | undefined;
    let page: Server | undefined;
    after(async () => {
      await browser?.close();
      await new Promise((resolve) => page?.close(resolve));
    });

    before(async () => {
      await mkdir(artifacts, { recursive: true });
      const question = await espeakCli("What are your opening hours?", { sampleRate: 16_000 });
      await writeFile(path.join(artifacts, "question.wav"), encodeWav({ sampleRate: 16_000, samples: concatSamples(silence(1500), question.samples, silence(4000)) }));
    });

    test("a spoken question gets a spoken answer from the project's knowledge, cross-origin, with a token from the page's backend", async () => {
      const parley = (await listen(h().app)).replace(/^ws/, "http");
      const { apiKey, projectId } = await h().organization(voiceConfig);
      const threadId = await h().thread(apiKey);
      let tokensIssued = 0;
      page = createServer((request, response) => {
        void (async () => {
          if (request.url === "/token") {
            // The embedding site's backend: it holds the API key and hands the browser a thread token.
            tokensIssued += 1;
            const token = await fetch(`${parley}/threads/${threadId}/token`, { method: "POST", headers: { authorization: apiKey } });
            response.writeHead(200, { "content-type": "application/json" }).end(await token.text());
            return;
          }
          response.writeHead(200, { "content-type": "text/html" }).end(`<!doctype html><html><body style="background:#f4f5f8;padding:20px">
<h3>Acme support (a customer's page)</h3><div id="widget"></div>
<script src="${parley}/widget.js"></script>
<script>
window.widget = Parley.mount({
  element: document.getElementById("widget"), threadId: ${JSON.stringify(threadId)}, projectName: "support", projectId: ${JSON.stringify(projectId)},
  getToken: () => fetch("/token").then((r) => r.json()).then((j) => j.access_token),
});
</script></body></html>`);
        })();
      });
      await new Promise<void>((resolve) => page?.listen(0, "127.0.0.1", resolve));
      const pageUrl = `http://localhost:${(page.address() as AddressInfo).port}/`;
      assert.notEqual(new URL(pageUrl).origin, new URL(parley).origin);

      browser = await chromium.launch({
        executablePath: "/usr/bin/chromium",
        args: [
          "--headless",
          "--no-sandbox",
          "--disable-gpu",
          "--disable-background-networking",
          "--disable-component-update",
          "--disable-sync",
          "--use-fake-ui-for-media-stream",
          "--use-fake-device-for-media-stream",
          `--use-file-for-fake-audio-capture=${path.join(artifacts, "question.wav")}%noloop`,
        ],
      });
      const tab = await browser.newPage();
      const consoleErrors: string[] = [];
      tab.on("console", (message) => {
        if (message.type() === "error") consoleErrors.push(message.text());
      });
      tab.on("pageerror", (error) => consoleErrors.push(error.message));
      // Keeps what the page sends to Parley, to look at when the call goes wrong.
      await tab.addInitScript(() => {
        const sent: number[] = [];
        (window as unknown as { sentAudio: number[] }).sentAudio = sent;
        const original = WebSocket.prototype.send;
        WebSocket.prototype.send = function (this: WebSocket, data: string | ArrayBufferLike | Blob | ArrayBufferView) {
          if (data instanceof ArrayBuffer && sent.length < 16_000 * 12) sent.push(...new Int16Array(data));
          original.call(this, data);
        };
      });
      await tab.goto(pageUrl);
      await tab.waitForSelector(".parley-talk", { timeout: 15_000 }).catch((error: unknown) => {
        throw new Error(`the widget did not mount: ${String(error)}; page errors: ${JSON.stringify(consoleErrors)}`);
      });
      await tab.click(".parley-talk");
      await tab.waitForFunction(
        () => {
          const stats = (window as unknown as { widget: { stats(): { audioBytes: number; transcript: string[] } } }).widget.stats();
          return stats.audioBytes > 32_000 && stats.transcript.some((line) => line.startsWith("Agent:"));
        },
        undefined,
        { timeout: 90_000, polling: 250 },
      ).catch(async (error: unknown) => {
        await tab.screenshot({ path: path.join(artifacts, "widget-call-failed.png") });
        const sentAudio = await tab.evaluate(() => (window as unknown as { sentAudio: number[] }).sentAudio);
        await writeFile(path.join(artifacts, "widget-sent.wav"), encodeWav({ sampleRate: 16_000, samples: Int16Array.from(sentAudio) }));
        const seen = await tab.evaluate(() => ({
          status: document.querySelector(".parley-status")?.textContent,
          log: document.querySelector(".parley-log")?.textContent,
          stats: (window as unknown as { widget: { stats(): unknown } }).widget.stats(),
        }));
        throw new Error(`no spoken answer came back: ${String(error)}; widget shows ${JSON.stringify(seen)}; page errors ${JSON.stringify(consoleErrors)}`);
      });
      await tab.screenshot({ path: path.join(artifacts, "widget-call.png") });
      const sentAudio = await tab.evaluate(() => (window as unknown as { sentAudio: number[] }).sentAudio);
      await writeFile(path.join(artifacts, "widget-sent.wav"), encodeWav({ sampleRate: 16_000, samples: Int16Array.from(sentAudio) }));
      const stats = await tab.evaluate(() => (window as unknown as { widget: { stats(): { audioBytes: number; callId: string; transcript: string[] } } }).widget.stats());
      await tab.click(".parley-talk");

      // Audio came back: more than a second of 16 kHz speech.
      assert.ok(stats.audioBytes > 32_000, `${stats.audioBytes} bytes of agent audio`);
      assert.ok(tokensIssued >= 1);
      const call = await waitForCall(h().request, apiKey, stats.callId, (detail) => detail.status === "ended", 30_000);
      assert.equal(call.call_type, "web_call");
      const heard = wordsOf((call.transcript_object ?? []).filter((entry) => entry.role === "user").map((entry) => entry.content).join(" "));
      assert.ok(heard.includes("opening") || heard.includes("hours"), `the call heard: ${call.transcript}`);
      assert.match(call.transcript ?? "", /^Agent: We are open from 9 to 5/m, `the agent said: ${call.transcript}`);
      assert.ok(call.recording_url);
      assert.deepEqual(consoleErrors, []);
    });
  },
  "pglite",
  audioVoiceSettings,
);
