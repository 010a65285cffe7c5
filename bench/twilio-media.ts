/**
 * `--only twilio`: the turn latency of a Twilio call on μ-law. A fake Twilio (test/providers/voice/fake-twilio.ts)
 * streams the line in real time as Twilio does, a 20 ms μ-law frame every 20 ms, and says a question made by eSpeak
 * NG; the figure is the time from the last frame of the caller's speech to the first frame of the agent's audio coming
 * back on the stream, on the offline engines (WebRTC VAD, pocketsphinx, eSpeak NG) and the built-in agent. The
 * baseline, measured in the same run on the same audio, is what the engines alone need for a turn: the end-of-turn
 * silence, pocketsphinx on the question and eSpeak NG on the answer's first sentence. The difference is Parley's
 * share: the transport, resampling, μ-law, VAD, the thread lock and storing the utterances.
 */
import { resample, toPipelineRate } from "../src/providers/speech/audio.js";
import { EspeakPool, EspeakTts } from "../src/providers/speech/espeak/espeak-tts.js";
import { decodeMuLaw } from "../src/providers/speech/mulaw.js";
import { PocketsphinxStt } from "../src/providers/speech/pocketsphinx/pocketsphinx-stt.js";
import { espeakMulaw, startFakeTwilio, streamOf, TwilioStream } from "../test/providers/voice/fake-twilio.js";
import type { Benchmark } from "./lib/benchmark.js";
import type { BenchContext, DbKind } from "./lib/context.js";
import { row, type BenchmarkResult, type Row } from "./lib/report.js";
import { sleep, summarize, type LatencySummary } from "./lib/stats.js";
import { eventually } from "../test/support/polling.js";
import { startVendorApp, vendorPublicBaseUrl } from "./lib/vendor-app.js";

const accountSid = `AC${"be".repeat(16)}`;
const authToken = "bench-twilio-auth-token-0123456789";
const question = "What are your opening hours?";
const answer = "We are open from 9 to 5 on weekdays.";
const endOfTurnMs = 500;

/** End of the caller's speech → first agent audio on the stream, for `calls` calls of `turns` questions each. */
async function measureCalls(kind: DbKind, context: BenchContext, calls: number, turns: number, spoken: Uint8Array): Promise<{ onStream: number[]; inPipeline: number[] }> {
  const twilio = await startFakeTwilio(accountSid, authToken);
  const inPipeline: number[] = [];
  const projectConfig = {
    agent: { provider: "builtin", knowledge: [{ question, answer }] },
    speech: { end_of_turn_ms: endOfTurnMs },
    voice: {
      provider: "twilio",
      accounts: [{ id: "6f1f6c43-3b8f-4d9e-9a57-2f0c4f1b7a01", phone_numbers: ["+14155550100"] }],
      twilio: { account_sid: accountSid, auth_token: authToken, api_base_url: twilio.url },
    },
  };
  const parley = await startVendorApp(kind, context, projectConfig, { onTurnLatency: (ms) => inPipeline.push(ms) }).catch(async (error: unknown) => {
    await twilio.close();
    throw error;
  });
  const onStream: number[] = [];
  try {
    for (let call = 0; call < calls; call++) {
      const threadId = String((await parley.request("POST", "/threads", {}))["thread_id"]);
      const created = await parley.request("POST", `/voice/${threadId}/phone-call`, { callee: "+14155552671", project_id: parley.projectId });
      const [bound] = await parley.db.query<{ provider_call_id: string }>("SELECT provider_call_id FROM calls WHERE id = $1", [String(created["id"])]);
      const stream = streamOf(twilio.forms.at(-1)!.form.get("Twiml") ?? "");
      const media = await TwilioStream.open(stream.url.replace(vendorPublicBaseUrl.replace(/^https/, "wss"), parley.wsBase));
      media.start(accountSid, bound!.provider_call_id, stream.token);
      media.startLine();
      await sleep(500);
      for (let turn = 0; turn < turns; turn++) {
        const before = media.received.length;
        const spokeUntil = await media.say(spoken);
        await eventually(() => media.received.slice(before).some((frame) => frame.event === "media"), { what: "the agent's answer", timeoutMs: 60_000 });
        const first = media.received.findIndex((frame, index) => index >= before && frame.event === "media");
        onStream.push(media.receivedAt[first]! - spokeUntil);
        // The whole answer (one sentence or more) plays to its end before the next question.
        await eventually(() => media.playedOut(), { what: "the answer's end", timeoutMs: 60_000 });
      }
      media.stop(accountSid, bound!.provider_call_id);
      media.close();
      await parley.request("DELETE", `/voice/${threadId}/phone-call`).catch(() => undefined);
    }
  } finally {
    await parley.close();
    await twilio.close();
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
