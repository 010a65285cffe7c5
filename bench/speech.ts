/**
 * Speech synthesis figures, printed, without assertions: start-up time, time per sentence, time per second of audio
 * and the longest event-loop stall while synthesizing, for eSpeak NG (when installed) and the vowel-tone fallback;
 * then the time to render a whole call's recording. Run with `npx tsx bench/speech.ts`.
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import { EspeakPool } from "../src/providers/speech/espeak/espeak-tts.js";
import { renderRecording, type Utterance } from "../src/providers/speech/recording.js";
import { espeakRecordingVoices, type RecordingVoices, toneRecordingVoices } from "../src/providers/speech/recording-voices.js";

const SENTENCES = [
  "Hello, thanks for calling Acme. How can I help you today?",
  "I would like to book a table for two people tomorrow at 7:30, please.",
  "We are open from nine to five on weekdays, and from ten to two on Saturdays.",
  "Sure.",
  "Could you tell me whether the order I placed last Tuesday has already shipped, and when it should arrive?",
  "Thank you, that is everything. Goodbye!",
];
const ROUNDS = 3;

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? 0;
}

async function measure(synthesizer: RecordingVoices): Promise<void> {
  const perSentence: number[] = [];
  let busy = 0;
  let audio = 0;
  const stalls = monitorEventLoopDelay({ resolution: 5 });
  stalls.enable();
  for (let round = 0; round < ROUNDS; round++) {
    for (const [index, sentence] of SENTENCES.entries()) {
      const started = performance.now();
      const speech = await (index % 2 === 0 ? synthesizer.agent : synthesizer.user).synthesize(sentence);
      const elapsed = performance.now() - started;
      perSentence.push(elapsed);
      busy += elapsed;
      audio += speech.samples.length / speech.sampleRate;
      // A turn of the event loop, so that the delay monitor sees stalls from synchronous work too.
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  }
  stalls.disable();
  console.log(
    `${synthesizer.name}: ${perSentence.length} sentences, median ${percentile(perSentence, 0.5).toFixed(0)} ms, ` +
      `p95 ${percentile(perSentence, 0.95).toFixed(0)} ms per sentence; ` +
      `${(busy / audio).toFixed(1)} ms per second of audio (${(audio / (busy / 1000)).toFixed(0)}× real time); ` +
      `longest event-loop stall ${(stalls.max / 1e6).toFixed(0)} ms`,
  );
}

async function measureRecording(synthesizer: RecordingVoices): Promise<void> {
  const utterances: Utterance[] = Array.from({ length: 12 }, (_, i) => ({
    role: i % 2 === 0 ? "agent" : "user",
    content: SENTENCES[i % SENTENCES.length] ?? "",
    startSeconds: i * 4,
  }));
  const started = performance.now();
  const recording = await renderRecording(utterances, synthesizer);
  console.log(
    `${synthesizer.name}: a ${utterances.length}-utterance call (${recording.durationSeconds.toFixed(1)} s, ` +
      `${(recording.wav.length / 1024).toFixed(0)} KiB WAV) renders in ${(performance.now() - started).toFixed(0)} ms`,
  );
}

const startedEspeak = performance.now();
const pool = new EspeakPool(1);
const espeak = await pool.check().then(() => espeakRecordingVoices(pool), () => undefined);
if (espeak) console.log(`espeak-ng: started (worker, WebAssembly compile, warm-up) in ${(performance.now() - startedEspeak).toFixed(0)} ms`);
else console.log("espeak-ng: not installed; only the fallback is measured");

for (const synthesizer of [espeak, toneRecordingVoices()]) {
  if (!synthesizer) continue;
  await measure(synthesizer);
  await measureRecording(synthesizer);
}
await pool.close();
