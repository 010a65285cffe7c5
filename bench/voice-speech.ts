/**
 * Calls with real audio on the offline engines (pocketsphinx, eSpeak NG) and the built-in agent:
 *  - the engines' own time on the audio of a turn: speech-to-text of the caller's question, text-to-speech of the
 *    agent's first sentence;
 *  - voice turn latency (end of the caller's speech → first frame of the agent's audio), p50/p99, one call at a time;
 *  - concurrent calls: rounds of 1, 2, 4… simultaneous calls until the p99 turn latency passes 1.5 s, with the CPU
 *    the process used per second of call (pocketsphinx decoders are child processes: their CPU is read from /proc).
 *
 *   npx tsx bench/voice-speech.ts [max_concurrent=16] [calls_alone=3]
 *
 * Prints a JSON line per figure, then a summary. Runs on embedded PGlite in memory.
 */
import { readdir, readFile } from "node:fs/promises";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pino from "pino";
import { createApp } from "../src/app.js";
import { loadConfig } from "../src/config.js";
import { toPipelineRate } from "../src/providers/speech/audio.js";
import { EspeakPool, EspeakTts } from "../src/providers/speech/espeak/espeak-tts.js";
import { PocketsphinxStt } from "../src/providers/speech/pocketsphinx/pocketsphinx-stt.js";
import { migrate } from "../src/store/migrate.js";
import { openPglite } from "../src/store/pglite-db.js";

const maxConcurrent = Number(process.argv[2] ?? 16);
const callsAlone = Number(process.argv[3] ?? 3);
const adminKey = "bench-admin-key-0123456789abcdef";
const question = "What are your opening hours?";
const answer = "We are open from 9 to 5 on weekdays.";

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
};

/** CPU seconds used so far by this process and its pocketsphinx decoders (children of its `sh` children). */
async function cpuSeconds(): Promise<number> {
  const own = process.cpuUsage();
  const stats: { pid: number; ppid: number; name: string; cpu: number }[] = [];
  for (const entry of await readdir("/proc").catch(() => [] as string[])) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, "utf8").catch(() => "");
    const name = stat.slice(stat.indexOf("(") + 1, stat.lastIndexOf(")"));
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    stats.push({ pid: Number(entry), ppid: Number(fields[1]), name, cpu: (Number(fields[11]) + Number(fields[12])) / 100 });
  }
  const shells = new Set(stats.filter((stat) => stat.ppid === process.pid && stat.name === "sh").map((stat) => stat.pid));
  const decoders = stats.filter((stat) => shells.has(stat.ppid) && stat.name.startsWith("pocketsphinx"));
  return (own.user + own.system) / 1e6 + decoders.reduce((sum, stat) => sum + stat.cpu, 0);
}

// The engines alone, on the same audio the calls use: the callee's voice saying the question, the agent's answer.
const pool = new EspeakPool(1);
const stt = new PocketsphinxStt("en-US", 1);
const callee = new EspeakTts(pool, "en-us", { pitch: 60 });
const agentVoice = new EspeakTts(pool, "en-us");
const questionAudio = toPipelineRate(await callee.synthesize(question));
await stt.transcribe(questionAudio);
const sttTimes: number[] = [];
const ttsTimes: number[] = [];
for (let i = 0; i < 5; i++) {
  let started = performance.now();
  await stt.transcribe(questionAudio);
  sttTimes.push(performance.now() - started);
  started = performance.now();
  await agentVoice.synthesize(answer);
  ttsTimes.push(performance.now() - started);
}
stt.close();
await pool.close();
const endOfTurnMs = 500;
const engines = { stt_p50_ms: percentile(sttTimes, 50), tts_first_sentence_p50_ms: percentile(ttsTimes, 50), end_of_turn_ms: endOfTurnMs };
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
});
const app = await createApp(config, { db, logger: pino({ level: "silent" }), voice: { onTurnLatency: (ms) => latencies.push(ms), heartbeatMs: 1000 } });
await app.server.ready();
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
    voice: { accounts: [{ id: "6f1f6c43-3b8f-4d9e-9a57-2f0c4f1b7a01", phone_numbers: ["+14155550100"] }], simulated: { script: [question, question, "Yes, tomorrow works for me."], ring_ms: 50, turn_ms: 300 } },
  },
});

/** Places `count` calls at once and waits for them all to end; returns the turn latencies and call-seconds. */
async function round(count: number): Promise<{ latencies: number[]; callSeconds: number; cpu: number; failed: number }> {
  const first = latencies.length;
  const cpuBefore = await cpuSeconds();
  const ids = await Promise.all(
    Array.from({ length: count }, async () => {
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
  return { latencies: latencies.slice(first), callSeconds, cpu: (await cpuSeconds()) - cpuBefore, failed };
}

const alone: number[] = [];
for (let i = 0; i < callsAlone; i++) alone.push(...(await round(1)).latencies);
const single = { turns: alone.length, p50_ms: percentile(alone, 50), p99_ms: percentile(alone, 99) };
console.log(JSON.stringify({ single }));
const engineTotal = endOfTurnMs + engines.stt_p50_ms + engines.tts_first_sentence_p50_ms;
console.log(`voice turn latency p50 ${single.p50_ms.toFixed(0)} ms, p99 ${single.p99_ms.toFixed(0)} ms; engines alone ${engineTotal.toFixed(0)} ms (end of turn ${endOfTurnMs} + STT ${engines.stt_p50_ms.toFixed(0)} + TTS ${engines.tts_first_sentence_p50_ms.toFixed(0)}); Parley adds ${((single.p50_ms / engineTotal - 1) * 100).toFixed(0)}%`);

let best = 0;
for (let count = 2; count <= maxConcurrent; count *= 2) {
  const result = await round(count);
  const p99 = percentile(result.latencies, 99);
  const cpuPerCallSecond = result.cpu / Math.max(1, result.callSeconds);
  console.log(JSON.stringify({ concurrent: count, turns: result.latencies.length, p50_ms: percentile(result.latencies, 50), p99_ms: p99, failed: result.failed, cpu_s_per_call_s: cpuPerCallSecond }));
  console.log(`${count} concurrent calls: p99 ${p99.toFixed(0)} ms, CPU ${(cpuPerCallSecond * 1000).toFixed(0)} ms per call-second`);
  if (!(p99 < 1500) || result.failed > 0) break;
  best = count;
}
console.log(`most concurrent calls with p99 < 1.5 s: ${best}`);
await app.close();
await db.close();
process.exit(0);
