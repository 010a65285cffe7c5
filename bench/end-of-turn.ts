/**
 * How often the adaptive end of turn cuts a caller off: sentences of the speech benchmark spoken with a pause in the
 * middle (the caller thinking), fed in real time to the pipeline's turn detector with the streaming recognizer's
 * partial words deciding whether the words so far read as complete. A turn that ends inside the pause cut the caller
 * off. The fixed 500 ms end of turn, which never ends inside a shorter pause, is the baseline; the figure is the
 * price of answering 300 ms sooner after a complete sentence.
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
async function cutOff(stt: PocketsphinxStt, first: Int16Array, second: Int16Array, pauseMs: number): Promise<boolean> {
  const vad = await WebRtcVad.create();
  let stream: ReturnType<PocketsphinxStt["stream"]> | undefined;
  const { speech } = withDefaults({});
  const detector = new TurnDetector(vad, { ...defaultTurnOptions, endOfTurnMs: speech.end_of_turn_ms, minEndOfTurnMs: speech.min_end_of_turn_ms }, () => stream !== undefined && readsComplete(stream.partial()));
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
      for (const pauseMs of [300, 450]) {
        const cut: string[] = [];
        for (const words of chosen) {
          const half = Math.floor(words.length / 2);
          const first = toPipelineRate(await voice.synthesize(words.slice(0, half).join(" ")));
          const second = toPipelineRate(await voice.synthesize(words.slice(half).join(" ")));
          if (await cutOff(stt, first, second, pauseMs)) cut.push(`${words.slice(0, half).join(" ")} | ${words.slice(half).join(" ")}`);
        }
        rows.push(
          row({
            benchmark: "end-of-turn",
            db: "-",
            name: `callers cut off by a ${pauseMs} ms pause mid-sentence (${chosen.length} sentences; fixed 500 ms end of turn: 0)`,
            figure: (cut.length / chosen.length) * 100,
            unit: "%",
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
