import assert from "node:assert/strict";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { after, before, test } from "node:test";
import type { Browser } from "playwright-core";
import { encodeWav } from "../../src/providers/speech/audio.js";
import { adminKey, forEachDatabase } from "../support/harness.js";
import { concatSamples, espeakCli, silence, wordsOf } from "../support/speech-audio.js";
import { audioVoiceSettings, listen, voiceConfig, voiceSuite, waitForCall } from "../voice-calls/support.js";
import { consoleErrorsOf, launchChromium } from "./widget-page.js";

const artifacts = path.resolve("test/artifacts");
const screenshots = new URL("../../test-artifacts/console/", import.meta.url).pathname;

/**
 * The console's test call, in real headless Chromium with a fake microphone playing a question spoken by espeak-ng:
 * from a project's page, the call hears it, the live transcript shows both sides, and the call is stored.
 */
forEachDatabase(
  "a test call from the console",
  (h) => {
    let browser: Browser | undefined;
    after(async () => {
      await browser?.close();
    });
    before(async () => {
      await mkdir(artifacts, { recursive: true });
      await mkdir(screenshots, { recursive: true });
      const question = await espeakCli("What are your opening hours?", { sampleRate: 16_000 });
      await writeFile(path.join(artifacts, "console-question.wav"), encodeWav({ sampleRate: 16_000, samples: concatSamples(silence(1500), question.samples, silence(4000)) }));
    });

    test("a project's page places a web call with the microphone and shows the live transcript", async () => {
      const parley = (await listen(h().app)).replace(/^ws/, "http");
      const { apiKey, organizationId, projectId } = await h().organization(voiceConfig);
      browser = await launchChromium([
        "--use-fake-ui-for-media-stream",
        "--use-fake-device-for-media-stream",
        `--use-file-for-fake-audio-capture=${path.join(artifacts, "console-question.wav")}%noloop`,
      ]);
      const tab = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      const errors = consoleErrorsOf(tab);
      await tab.goto(`${parley}/console`);
      await tab.evaluate(([key, admin]) => {
        sessionStorage.setItem("parley.console.apiKey", key!);
        sessionStorage.setItem("parley.console.adminKey", admin!);
      }, [apiKey, adminKey]);
      await tab.goto(`${parley}/console#/admin?org=${organizationId}&project=${projectId}`);
      // Only the hash changed: the reload makes the page start again, signed in.
      await tab.reload();
      await tab.getByRole("button", { name: "Start test call" }).click();
      const agentLine = tab.locator(".live-transcript .message.assistant", { hasText: "We are open from 9 to 5" });
      await agentLine.waitFor({ timeout: 90_000 }).catch((error: unknown) => {
        throw new Error(`no answer in the live transcript: ${String(error)}; errors ${JSON.stringify(errors)}`);
      });
      const heard = wordsOf(await tab.locator(".live-transcript .message.user").allInnerTexts().then((lines) => lines.join(" ")));
      // PocketSphinx hears the fake microphone loosely: a content word of the question.
      assert.ok(["opening", "opened", "open", "hours", "hour"].some((word) => heard.includes(word)), `heard ${heard.join(" ")}`);
      await tab.screenshot({ path: `${screenshots}12-test-call.png`, fullPage: true });
      const callLink = tab.getByRole("link", { name: "Open the call" });
      const callId = (await callLink.getAttribute("href"))!.replace("#/calls/", "");
      await tab.getByRole("button", { name: "Hang up" }).click();
      await tab.getByRole("button", { name: "Start test call" }).waitFor();
      const call = await waitForCall(h().request, apiKey, callId, (detail) => detail.status === "ended", 30_000);
      assert.equal(call.call_type, "web_call");
      // Hung up while the agent may still be speaking: what is sure to be stored is what the caller said.
      assert.match(call.transcript ?? "", /^User: .*(open|hour)/m);
      await callLink.click();
      await tab.locator(".label[title=web_call]").first().waitFor();
      assert.equal(await tab.locator("h1 .label").innerText(), "Web call");
      assert.deepEqual(errors, []);
    });
  },
  voiceSuite({ voice: audioVoiceSettings, only: "pglite" }),
);
