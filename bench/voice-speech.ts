/**
 * Calls with real audio on the default offline engines (pocketsphinx streaming in this process, flite) and the
 * built-in agent:
 *  - the engines' own time on the audio of a turn: the recognizer's final words after the question's last frame
 *    (it decodes while the caller speaks), text-to-speech of the agent's first sentence;
 *  - voice turn latency (end of the caller's speech → first frame of the agent's audio), p50/p99, one call at a time;
 *  - concurrent calls: rounds of 1, 2, 4… simultaneous calls until the p99 turn latency passes 1.5 s, with the CPU
 *    the process used per second of call (decoders and voices run in the process, on libuv's thread pool). The
 *    callers of a round say the same lines. By default the calls start spread evenly over 4 s (about one line and
 *    its answer), as independent calls would; with `together` they start at once, so that every caller speaks at
 *    the same moments and every turn ends in the same ~100 ms: the worst case for the recognizer, whose decoding of
 *    a speaking caller costs about a third of a core;
 *  - resident memory, freed C memory handed back as the server does (src/process-memory.ts): idle after start, per
 *    active call at the largest round under 1.5 s, and idle again once the decoders have been freed.
 *
 *   npx tsx bench/voice-speech.ts [max_concurrent=16] [calls_alone=3] [staggered|together]
 *
 * SPEECH_STT_WORKERS from the environment sets the most decoders, as for the server. Prints a JSON line per figure,
 * then a summary. Runs on embedded PGlite in memory.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pino from "pino";
import { createApp } from "../src/app.js";
import { loadConfig } from "../src/config.js";
import { withDefaults } from "../src/domain/projects/project-config.js";
import { concatSamples, toPipelineRate } from "../src/providers/speech/audio.js";
import { FliteTts } from "../src/providers/speech/flite/flite-tts.js";
import { DECODER_IDLE_MS, PocketsphinxStt } from "../src/providers/speech/pocketsphinx/pocketsphinx-stt.js";
import { trimFreedMemory } from "../src/process-memory.js";
import { migrate } from "../src/store/migrate.js";
import { openPglite } from "../src/store/pglite-db.js";

const maxConcurrent = Number(process.argv[2] ?? 16);
const callsAlone = Number(process.argv[3] ?? 3);
const together = process.argv[4] === "together";
const STAGGER_MS = 4000;
const adminKey = "bench-admin-key-0123456789abcdef";
const question = "What are your opening hours?";
const answer = "We are open from 9 to 5 on weekdays.";

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
};

/** CPU seconds used so far by this process, its decoder and synthesis threads included. */
function cpuSeconds(): number {
  const own = process.cpuUsage();
  return (own.user + own.system) / 1e6;
}

const rssMb = () => process.memoryUsage().rss / 1e6;
const TRIM_INTERVAL_MS = 2000;
const trimmer = trimFreedMemory(TRIM_INTERVAL_MS);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// The engines alone, on the same audio the calls use: the callee's voice saying the question, the agent's answer.
const stt = new PocketsphinxStt("en-US", 1);
const callee = new FliteTts("rms");
const agentVoice = new FliteTts(withDefaults({}).speech.tts.voice as "kal16");
const questionAudio = concatSamples(toPipelineRate(await callee.synthesize(question)), new Int16Array(1600));
await stt.transcribe(questionAudio);
const sttTimes: number[] = [];
const ttsTimes: number[] = [];
for (let i = 0; i < 5; i++) {
  const stream = stt.stream();
  for (let at = 0; at < questionAudio.length; at += 320) {
    stream.write(questionAudio.subarray(at, at + 320));
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  let started = performance.now();
  await stream.finish();
  sttTimes.push(performance.now() - started);
  started = performance.now();
  await agentVoice.synthesize(answer);
  ttsTimes.push(performance.now() - started);
}
stt.close();
const endOfTurnMs = withDefaults({}).speech.min_end_of_turn_ms;
const engines = { stt_final_p50_ms: percentile(sttTimes, 50), tts_first_sentence_p50_ms: percentile(ttsTimes, 50), end_of_turn_ms: endOfTurnMs };
console.log(JSON.stringify({ engines }));

const latencies: number[] = [];
const db = await openPglite(undefined);
await migrate(db);
const config = loadConfig({
  ADMIN_API_KEY: adminKey,
  JWT_SECRET: "bench-jwt-secret-0123456789abcdef0123",
  ENCRYPTION_KEY: "bench-encryption-key-0123456789abcdef",
  DATA_DIR: await mkdtemp(path.join(tmpdir(), "parley-bench-speech-")),
  LOG_LEVEL: "silent",
  SPEECH_MODE: "audio",
  ...(process.env["SPEECH_STT_WORKERS"] ? { SPEECH_STT_WORKERS: process.env["SPEECH_STT_WORKERS"] } : {}),
});
const app = await createApp(config, { db, logger: pino({ level: "silent" }), voice: { onTurnLatency: (ms) => latencies.push(ms), heartbeatMs: 1000 } });
await app.server.ready();
await sleep(2 * TRIM_INTERVAL_MS);
const idleRss = rssMb();
console.log(JSON.stringify({ idle_rss_mb: idleRss, uv_threadpool_size: Number(process.env["UV_THREADPOOL_SIZE"] ?? 4), stt_workers: config.voice.sttWorkers }));
const inject = async (method: "GET" | "POST", url: string, authorization: string, payload?: unknown) => {
  const response = await app.server.inject({ method, url, headers: { authorization }, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
  if (response.statusCode !== 200 && response.statusCode !== 201) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`);
  return JSON.parse(response.body) as Record<string, unknown>;
};
const org = await inject("POST", "/admin/organizations", `Bearer ${adminKey}`, { name: "Bench" });
const apiKey = String(org.api_key);
const project = await inject("POST", `/admin/organizations/${String(org.id)}/projects`, `Bearer ${adminKey}`, {
  name: "bench",
  config: {
    agent: { knowledge: [{ question, answer }] },
    voice: { accounts: [{ id: "6f1f6c43-3b8f-4d9e-9a57-2f0c4f1b7a01", phone_numbers: ["+14155550100"] }], simulated: { script: [question, question, question, "Yes, tomorrow works for me."], ring_ms: 50, turn_ms: 300 } },
  },
});

/** Places `count` calls at once and waits for them all to end; returns the turn latencies and call-seconds. */
async function round(count: number): Promise<{ latencies: number[]; callSeconds: number; cpu: number; failed: number; peakRss: number }> {
  const first = latencies.length;
  const cpuBefore = cpuSeconds();
  let peakRss = rssMb();
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, rssMb())), 200);
  const ids = await Promise.all(
    Array.from({ length: count }, async (_, index) => {
      if (!together) await sleep((index * STAGGER_MS) / count);
      const thread = await inject("POST", "/threads", apiKey, {});
      const call = await inject("POST", `/voice/${String(thread.thread_id)}/phone-call`, apiKey, { callee: "+14155552671", project_id: project.id });
      return String(call.id);
    }),
  );
  let callSeconds = 0;
  let failed = 0;
  for (const id of ids) {
    for (;;) {
      const call = await inject("GET", `/calls/${id}`, apiKey);
      if (call.status === "ended" || call.status === "error") {
        callSeconds += Number(call.duration_ms ?? 0) / 1000;
        if (call.status === "error") failed += 1;
        break;
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  clearInterval(sampler);
  return { latencies: latencies.slice(first), callSeconds, cpu: cpuSeconds() - cpuBefore, failed, peakRss };
}

if (callsAlone > 0) {
  const alone: number[] = [];
  for (let i = 0; i < callsAlone; i++) alone.push(...(await round(1)).latencies);
  const single = { turns: alone.length, p50_ms: percentile(alone, 50), p99_ms: percentile(alone, 99) };
  console.log(JSON.stringify({ single }));
  const engineTotal = endOfTurnMs + engines.stt_final_p50_ms + engines.tts_first_sentence_p50_ms;
  console.log(`voice turn latency p50 ${single.p50_ms.toFixed(0)} ms, p99 ${single.p99_ms.toFixed(0)} ms; engines alone ${engineTotal.toFixed(0)} ms (end of turn ${endOfTurnMs} + STT final ${engines.stt_final_p50_ms.toFixed(0)} + TTS ${engines.tts_first_sentence_p50_ms.toFixed(0)}); Parley adds ${((single.p50_ms / engineTotal - 1) * 100).toFixed(0)}%`);
}

let best = 0;
let perCallAtBest = Number.NaN;
let passing = true;
for (let count = 2; count <= maxConcurrent; count *= 2) {
  const result = await round(count);
  const p99 = percentile(result.latencies, 99);
  const cpuPerCallSecond = result.cpu / Math.max(1, result.callSeconds);
  console.log(JSON.stringify({ concurrent: count, start: together ? "together" : "staggered", turns: result.latencies.length, p50_ms: percentile(result.latencies, 50), p99_ms: p99, failed: result.failed, cpu_s_per_call_s: cpuPerCallSecond }));
  console.log(`${count} concurrent calls: p50 ${percentile(result.latencies, 50).toFixed(0)} ms, p99 ${p99.toFixed(0)} ms, CPU ${(cpuPerCallSecond * 1000).toFixed(0)} ms per call-second`);
  // Every round runs, so that the table has each; the figure is the largest round under 1.5 s below the first over.
  if (!(p99 < 1500) || result.failed > 0) passing = false;
  if (!passing) continue;
  best = count;
  perCallAtBest = (result.peakRss - idleRss) / count;
}
console.log(`most concurrent calls with p99 < 1.5 s: ${best}`);
await sleep(DECODER_IDLE_MS + 2 * TRIM_INTERVAL_MS);
console.log(JSON.stringify({ idle_rss_after_calls_mb: rssMb() }));
console.log(`resident memory: idle ${idleRss.toFixed(0)} MB, ${perCallAtBest.toFixed(1)} MB per active call at ${best} calls, idle again ${rssMb().toFixed(0)} MB`);
trimmer.stop();
await app.close();
await db.close();
process.exit(0);
