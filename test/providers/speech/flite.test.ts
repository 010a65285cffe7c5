import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, it } from "node:test";
import { FliteTts } from "../../../src/providers/speech/flite/flite-tts.js";

describe("flite through its launcher", () => {
  it("sentences spoken at once each come back as their own speech", async () => {
    const voice = new FliteTts("kal16");
    const texts = Array.from({ length: 12 }, (_, index) => `Sentence number ${index + 1}${", and more".repeat(index % 4)}.`);
    const together = await Promise.all(texts.map((text) => voice.synthesize(text)));
    for (const [index, text] of texts.entries()) {
      const alone = await voice.synthesize(text);
      assert.deepEqual(together[index]!.samples, alone.samples, `"${text}" came back as another sentence's speech`);
    }
  });

  it("speaks shell syntax as words, never runs it, and takes a text of several lines", async () => {
    const marker = path.join(tmpdir(), `parley-flite-${process.pid}`);
    const audio = await new FliteTts("kal16").synthesize(`Hello $(touch ${marker}) \`touch ${marker}\`; touch ${marker}\nand a second line`);
    assert.equal(existsSync(marker), false);
    assert.ok(audio.samples.some((sample) => Math.abs(sample) > 1000));
  });

  it("an aborted synthesis rejects", async () => {
    const controller = new AbortController();
    const spoken = new FliteTts("kal16").synthesize("This is not needed any more.", controller.signal);
    controller.abort();
    await assert.rejects(spoken, (error: unknown) => error instanceof Error && error.name === "AbortError");
  });
});
