import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { before, after, test } from "node:test";
import type { Browser } from "playwright-core";
import { encodeWav } from "../../src/providers/speech/audio.js";
import { concatSamples, espeakCli, silence, wordsOf } from "../support/speech-audio.js";
import { audioVoiceSettings, listen, voiceConfig, voiceSuite, waitForCall } from "../voice-calls/support.js";
import { consoleErrorsOf, launchChromium, startEmbeddingSite, type EmbeddingSite } from "./widget-page.js";
import { forEachDatabase } from "../support/harness.js";

const artifacts = path.resolve("test/artifacts");

/**
 * The widget in real headless Chromium, on a page of another origin than Parley's, with a fake microphone that plays
 * a question spoken by espeak-ng: the call must hear it, answer from the project's knowledge, and speak back.
 */
forEachDatabase(
  "the browser widget in headless Chromium",
  (h) => {
    let browser: Browser | undefined;
    let site: EmbeddingSite | undefined;
    after(async () => {
      await browser?.close();
      await site?.close();
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
      site = await startEmbeddingSite({ parley, apiKey, threadId, projectId });
      browser = await launchChromium([
        "--use-fake-ui-for-media-stream",
        "--use-fake-device-for-media-stream",
        `--use-file-for-fake-audio-capture=${path.join(artifacts, "question.wav")}%noloop`,
      ]);
      const tab = await browser.newPage();
      const consoleErrors = consoleErrorsOf(tab);
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
      await tab.goto(site.url);
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
      assert.ok(site.tokens.length >= 1);
      const call = await waitForCall(h().request, apiKey, stats.callId, (detail) => detail.status === "ended", 30_000);
      assert.equal(call.call_type, "web_call");
      const heard = wordsOf((call.transcript_object ?? []).filter((entry) => entry.role === "user").map((entry) => entry.content).join(" "));
      // PocketSphinx hears the browser's microphone loosely ("what are your opened an hour"): a content word of the question.
      assert.ok(["opening", "opened", "open", "hours", "hour"].some((word) => heard.includes(word)), `the call heard: ${call.transcript}`);
      assert.match(call.transcript ?? "", /^Agent: We are open from 9 to 5/m, `the agent said: ${call.transcript}`);
      assert.ok(call.recording_url);
      assert.deepEqual(consoleErrors, []);
    });
  },
  voiceSuite({ voice: audioVoiceSettings, only: "pglite" }),
);
