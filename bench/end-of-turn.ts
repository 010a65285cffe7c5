/**
 * How often the adaptive end of turn cuts a caller off: sentences of the speech benchmark spoken with a pause in the
 * middle (the caller thinking), fed in real time to the pipeline's turn detector with the streaming recognizer's
 * partial words deciding whether the words so far read as complete. A turn that ends inside the pause cut the caller
 * off. The baseline is the same audio with the fixed end of turn (`end_of_turn_ms` alone): the voice's own silence
 * at the end and start of each half lengthens every pause, so it cuts some callers off too; the difference is the
 * price of answering sooner after a complete sentence.
 */
import { readFile } from "node:fs/promises";
import { withDefaults } from "../src/domain/projects/project-config.js";
import { concatSamples, FRAME_SAMPLES, framesOf, toPipelineRate } from "../src/providers/speech/audio.js";
import { FliteTts } from "../src/providers/speech/flite/flite-tts.js";
import { readsComplete } from "../src/providers/speech/pipeline/phrases.js";
import { defaultTurnOptions, TurnDetector } from "../src/providers/speech/pipeline/turn-detector.js";
import { PocketsphinxStt } from "../src/providers/speech/pocketsphinx/pocketsphinx-stt.js";
import { WebRtcVad } from "../src/providers/speech/webrtc/webrtc-vad.js";
import type { Benchmark } from "./lib/benchmark.js";
import { row, type Row } from "./lib/report.js";

const silence = (ms: number) => new Int16Array(Math.round((ms / 1000) * 16_000));

/** Whether a turn ended before the second half began, feeding one sentence in real time. */
async function cutOff(stt: PocketsphinxStt, first: Int16Array, second: Int16Array, pauseMs: number, adaptive: boolean): Promise<boolean> {
  const vad = await WebRtcVad.create();
  let stream: ReturnType<PocketsphinxStt["stream"]> | undefined;
  const { speech } = withDefaults({});
  const minEndOfTurnMs = adaptive ? speech.min_end_of_turn_ms : speech.end_of_turn_ms;
  const detector = new TurnDetector(vad, { ...defaultTurnOptions, endOfTurnMs: speech.end_of_turn_ms, minEndOfTurnMs }, () => stream !== undefined && readsComplete(stream.partial()));
  const secondStarts = Math.ceil((300 * 16 + first.length + pauseMs * 16) / FRAME_SAMPLES);
  let frame = 0;
  let ended: number | undefined;
  try {
    for (const samples of framesOf(concatSamples(silence(300), first, silence(pauseMs), second, silence(800)))) {
      frame += 1;
      const event = detector.push(samples);
      if (event?.type === "speech_started" && stream === undefined) {
        stream = stt.stream();
        stream.write(event.audio);
      } else if (event?.type === "turn_ended") {
        ended = frame;
        break;
      } else if (detector.inSpeech) {
        stream?.write(samples);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  } finally {
    stream?.cancel();
    vad.close();
  }
  return ended !== undefined && ended < secondStarts;
}

export const endOfTurn: Benchmark = {
  name: "end-of-turn",
  byDefault: false,
  async run(context) {
    const rows: Row[] = [];
    const { sentences } = JSON.parse(await readFile(new URL("./speech/sentences.json", import.meta.url), "utf8")) as { sentences: { text: string }[] };
    const long = sentences.map((sentence) => sentence.text.split(" ")).filter((words) => words.length >= 4);
    const chosen = context.options.quick ? long.filter((_, index) => index % 3 === 0) : long;
    const voice = new FliteTts("rms");
    const stt = new PocketsphinxStt("en-US", 1);
    const details: Record<string, unknown> = {};
    try {
      await stt.warm();
      for (const pauseMs of [150, 300]) {
        const cut = { adaptive: [] as string[], fixed: [] as string[] };
        for (const words of chosen) {
          const half = Math.floor(words.length / 2);
          const first = toPipelineRate(await voice.synthesize(words.slice(0, half).join(" ")));
          const second = toPipelineRate(await voice.synthesize(words.slice(half).join(" ")));
          const label = `${words.slice(0, half).join(" ")} | ${words.slice(half).join(" ")}`;
          if (await cutOff(stt, first, second, pauseMs, true)) cut.adaptive.push(label);
          if (await cutOff(stt, first, second, pauseMs, false)) cut.fixed.push(label);
        }
        rows.push(
          row({
            benchmark: "end-of-turn",
            db: "-",
            name: `callers cut off by a ${pauseMs} ms pause mid-sentence, adaptive end of turn (${chosen.length} sentences)`,
            figure: (cut.adaptive.length / chosen.length) * 100,
            unit: "%",
            baseline: (cut.fixed.length / chosen.length) * 100,
            baselineLabel: "fixed end of turn",
          }),
        );
        details[`pause ${pauseMs} ms`] = cut;
      }
    } finally {
      stt.close();
    }
    return { rows, details, notes: [] };
  },
};
