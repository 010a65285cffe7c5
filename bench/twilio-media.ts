/**
 * `--only twilio`: the turn latency of a Twilio call on μ-law. A fake Twilio (test/providers/voice/fake-twilio.ts)
 * streams the line in real time as Twilio does, a 20 ms μ-law frame every 20 ms, and says a question made by eSpeak
 * NG; the figure is the time from the last frame of the caller's speech to the first frame of the agent's audio coming
 * back on the stream, on the offline engines (WebRTC VAD, pocketsphinx, eSpeak NG) and the built-in agent. The
 * baseline, measured in the same run on the same audio, is what the engines alone need for a turn: the end-of-turn
 * silence, pocketsphinx on the question and eSpeak NG on the answer's first sentence. The difference is Parley's
 * share: the transport, resampling, μ-law, VAD, the thread lock and storing the utterances.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pino from "pino";
import { createApp } from "../src/app.js";
import { loadConfig } from "../src/config.js";
import { resample, toPipelineRate } from "../src/providers/speech/audio.js";
import { EspeakPool, EspeakTts } from "../src/providers/speech/espeak-tts.js";
import { decodeMuLaw } from "../src/providers/speech/mulaw.js";
import { PocketsphinxStt } from "../src/providers/speech/pocketsphinx-stt.js";
import { migrate } from "../src/store/migrate.js";
import { openPglite } from "../src/store/pglite-db.js";
import { openPostgres } from "../src/store/postgres-db.js";
import { espeakMulaw, startFakeTwilio, streamOf, TwilioStream } from "../test/providers/voice/fake-twilio.js";
import type { Benchmark } from "./lib/benchmark.js";
import type { BenchContext, DbKind } from "./lib/context.js";
import { row, type BenchmarkResult, type Row } from "./lib/report.js";
import { sleep, summarize, type LatencySummary } from "./lib/stats.js";

const adminKey = "bench-admin-key-0123456789abcdef";
const accountSid = `AC${"be".repeat(16)}`;
const authToken = "bench-twilio-auth-token-0123456789";
const question = "What are your opening hours?";
const answer = "We are open from 9 to 5 on weekdays.";
const endOfTurnMs = 500;

async function until(what: string, ready: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ready()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/** End of the caller's speech → first agent audio on the stream, for `calls` calls of `turns` questions each. */
async function measureCalls(kind: DbKind, context: BenchContext, calls: number, turns: number, spoken: Uint8Array): Promise<{ onStream: number[]; inPipeline: number[] }> {
  const database = kind === "postgres" ? await context.postgresDatabase() : undefined;
  const dataDir = await mkdtemp(path.join(tmpdir(), "parley-bench-twilio-"));
  const db = database ? openPostgres(database.url, 10) : await openPglite(undefined);
  await migrate(db);
  const twilio = await startFakeTwilio(accountSid, authToken);
  const inPipeline: number[] = [];
  const app = await createApp(
    loadConfig({
      ADMIN_API_KEY: adminKey,
      JWT_SECRET: "bench-jwt-secret-0123456789abcdef0123",
      ENCRYPTION_KEY: "bench-encryption-key-0123456789abcdef",
      DATA_DIR: dataDir,
      LOG_LEVEL: "silent",
      PUBLIC_BASE_URL: "https://parley.example.test",
      ...(database ? { DATABASE_URL: database.url } : {}),
    }),
    { db, logger: pino({ level: "silent" }), voice: { onTurnLatency: (ms) => inPipeline.push(ms) } },
  );
  const onStream: number[] = [];
  try {
    const wsBase = (await app.server.listen({ port: 0, host: "127.0.0.1" })).replace(/^http/, "ws");
    const inject = async (method: "POST" | "DELETE", url: string, authorization: string, payload?: unknown) => {
      const response = await app.server.inject({ method, url, headers: { authorization }, ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }) });
      if (response.statusCode >= 300) throw new Error(`${url}: ${response.statusCode} ${response.body}`);
      return JSON.parse(response.body) as Record<string, unknown>;
    };
    const org = await inject("POST", "/admin/organizations", `Bearer ${adminKey}`, { name: "Bench" });
    const apiKey = String(org["api_key"]);
    const project = await inject("POST", `/admin/organizations/${String(org["id"])}/projects`, `Bearer ${adminKey}`, {
      name: "bench",
      config: {
        agent: { provider: "builtin", knowledge: [{ question, answer }] },
        speech: { end_of_turn_ms: endOfTurnMs },
        voice: {
          provider: "twilio",
          accounts: [{ id: "6f1f6c43-3b8f-4d9e-9a57-2f0c4f1b7a01", phone_numbers: ["+14155550100"] }],
          twilio: { account_sid: accountSid, auth_token: authToken, api_base_url: twilio.url },
        },
      },
    });
    for (let call = 0; call < calls; call++) {
      const threadId = String((await inject("POST", "/threads", apiKey, {}))["thread_id"]);
      const created = await inject("POST", `/voice/${threadId}/phone-call`, apiKey, { callee: "+14155552671", project_id: String(project["id"]) });
      const [bound] = await db.query<{ provider_call_id: string }>("SELECT provider_call_id FROM calls WHERE id = $1", [String(created["id"])]);
      const stream = streamOf(twilio.forms.at(-1)!.form.get("Twiml") ?? "");
      const media = await TwilioStream.open(stream.url.replace("wss://parley.example.test", wsBase));
      media.start(accountSid, bound!.provider_call_id, stream.token);
      media.startLine();
      await sleep(500);
      for (let turn = 0; turn < turns; turn++) {
        const before = media.received.length;
        const spokeUntil = await media.say(spoken);
        await until("the agent's answer", () => media.received.slice(before).some((frame) => frame.event === "media"));
        const first = media.received.findIndex((frame, index) => index >= before && frame.event === "media");
        onStream.push(media.receivedAt[first]! - spokeUntil);
        // The whole answer (one sentence or more) plays to its end before the next question.
        await until(
          "the answer's end",
          () =>
            media.echoed.length === media.received.filter((frame) => frame.event === "mark").length &&
            performance.now() - (media.receivedAt.at(-1) ?? 0) > 1000,
        );
      }
      media.stop(accountSid, bound!.provider_call_id);
      media.close();
      await inject("DELETE", `/voice/${threadId}/phone-call`, apiKey).catch(() => undefined);
    }
  } finally {
    await app.close();
    await db.close();
    await twilio.close();
    await database?.drop();
    await rm(dataDir, { recursive: true, force: true });
  }
  return { onStream, inPipeline };
}

/** The engines alone on the same audio: pocketsphinx on the question as the pipeline hears it, eSpeak NG on the answer. */
async function measureEngines(spoken: Uint8Array, count: number): Promise<{ sttMs: number; ttsMs: number }> {
  const stt = new PocketsphinxStt("en-US", 1);
  const pool = new EspeakPool(1);
  const tts = new EspeakTts(pool, "en-us");
  const heard = resample(decodeMuLaw(spoken), 8000, 16_000);
  const sttTimes: number[] = [];
  const ttsTimes: number[] = [];
  try {
    await stt.transcribe(heard);
    for (let i = 0; i < count; i++) {
      let started = performance.now();
      await stt.transcribe(heard);
      sttTimes.push(performance.now() - started);
      started = performance.now();
      toPipelineRate(await tts.synthesize(answer));
      ttsTimes.push(performance.now() - started);
    }
  } finally {
    stt.close();
    await pool.close();
  }
  return { sttMs: summarize(sttTimes).p50, ttsMs: summarize(ttsTimes).p50 };
}

export const twilioMedia: Benchmark = {
  name: "twilio",
  byDefault: false,
  async run(context: BenchContext): Promise<BenchmarkResult> {
    const calls = context.options.quick ? 2 : 5;
    const turns = 3;
    const spoken = await espeakMulaw(question);
    const engines = await measureEngines(spoken, 5);
    const alone = endOfTurnMs + engines.sttMs + engines.ttsMs;
    const rows: Row[] = [];
    const details: Record<string, LatencySummary | number> = { engines_alone_ms: alone, stt_p50_ms: engines.sttMs, tts_p50_ms: engines.ttsMs };
    for (const kind of context.options.dbs) {
      const measured = await measureCalls(kind, context, calls, turns, spoken);
      process.stderr.write(`  twilio ${kind}: on the stream ${JSON.stringify(measured.onStream.map(Math.round))}, in the pipeline ${JSON.stringify(measured.inPipeline.map(Math.round))}\n`);
      // The server's first turn loads the recognizer's model: reported on its own, not in the percentiles.
      const [cold, ...warm] = measured.onStream;
      const onStream = summarize(warm);
      details[kind] = onStream;
      details[`${kind}-pipeline`] = summarize(measured.inPipeline);
      for (const p of ["p50", "p99"] as const) {
        rows.push(
          row({ benchmark: "twilio media", db: kind, name: `μ-law turn: end of speech → first agent audio ${p}`, figure: onStream[p], unit: "ms", baseline: alone, baselineLabel: "engines alone (end of turn + STT + TTS)", target: "info" }),
        );
      }
      rows.push(row({ benchmark: "twilio media", db: kind, name: "μ-law turn: the server's first turn (model loading)", figure: cold ?? Number.NaN, unit: "ms", target: "info" }));
    }
    return {
      rows,
      details,
      notes: [
        `twilio media: ${calls} calls × ${turns} turns per database on a line streamed in real time; engines alone: end of turn ${endOfTurnMs} ms + pocketsphinx ${engines.sttMs.toFixed(0)} ms + eSpeak NG ${engines.ttsMs.toFixed(0)} ms`,
      ],
    };
  },
};
