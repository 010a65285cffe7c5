/**
 * The latency of a voice turn with a tool, through the real speech pipeline (eSpeak NG speaking), the agent's tool
 * rounds and a signed HTTP tool request: a fake OpenAI-compatible model asks for `book_appointment`, whose receiver
 * answers after `tool_ms`, then answers. Measured from the caller's turn (a text turn, so that speech recognition is
 * not part of it) to the first audio frame of the filler phrase (`speak_during_execution`), and to the first frame of
 * the answer.
 *
 *   npx tsx bench/voice-tools.ts [turns=5] [tool_ms=800]
 *
 * Prints a JSON line per turn, then a summary.
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import pino from "pino";
import { generateReply } from "../src/domain/chat/agent-reply.js";
import { normalizeTool } from "../src/domain/tools/tool-definitions.js";
import { ToolRunner } from "../src/domain/tools/tool-runner.js";
import { createLlmProvider } from "../src/providers/llm/index.js";
import { EspeakPool, EspeakTts } from "../src/providers/speech/espeak/espeak-tts.js";
import { CallRecorder } from "../src/providers/speech/pipeline/call-recorder.js";
import type { AudioTransport } from "../src/providers/speech/pipeline/transport.js";
import { defaultTurnOptions } from "../src/providers/speech/pipeline/turn-detector.js";
import { VoicePipeline } from "../src/providers/speech/pipeline/voice-pipeline.js";
import { PocketsphinxStt } from "../src/providers/speech/pocketsphinx/pocketsphinx-stt.js";
import { WebRtcVad } from "../src/providers/speech/webrtc/webrtc-vad.js";
import { HttpToolTransport } from "../src/providers/tools/http-tool-transport.js";
import { VoiceAgentSession } from "../src/domain/calls/voice-agent-session.js";
import { startFakeOpenAi, type CapturedRequest } from "../test/support/fake-llm-servers.js";

const turns = Number(process.argv[2] ?? 5);
const toolMs = Number(process.argv[3] ?? 800);
const filler = "One moment while I book that.";

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? Number.NaN;
};

const receiver = createServer((request, response) => {
  request.resume();
  request.on("end", () => setTimeout(() => response.writeHead(200, { "content-type": "application/json" }).end('{"booked":true}'), toolMs));
});
await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/book`;
const hasToolResults = (request: CapturedRequest) => (request.json as { messages: { role: string }[] }).messages.some((message) => message.role === "tool");
const model = await startFakeOpenAi();
model.setBehaviour((request) => (hasToolResults(request) ? { chunks: ["You are booked ", "for Tuesday at nine."] } : { chunks: [], toolCalls: [{ name: "book_appointment", arguments: { day: "Tuesday" } }] }));

const tool = normalizeTool({ name: "book_appointment", parameters: { type: "object", properties: { day: { type: "string" } } }, url: receiverUrl, speak_during_execution: filler });
const runner = new ToolRunner([tool], "bench-tool-secret-0123456789", new HttpToolTransport({ allowInternalNetworks: true }), "phone_call");
const llm = createLlmProvider({ provider: "openai", base_url: model.url, model: "fake" } as Parameters<typeof createLlmProvider>[0], "sk-fake", { timeoutMs: 10_000 });
const pool = new EspeakPool(1);
const stt = new PocketsphinxStt("en-US", 1);

const toFiller: number[] = [];
const toAnswer: number[] = [];
for (let turn = 0; turn < turns; turn++) {
  const vad = await WebRtcVad.create();
  let started = 0;
  let firstFrame: number | undefined;
  let fillerDone = false;
  let answerFrame: number | undefined;
  let done: () => void = () => undefined;
  const finished = new Promise<void>((resolve) => (done = resolve));
  const agent = new VoiceAgentSession({
    generate: async (request) => {
      const reply = await generateReply(llm, request.messages, "reply", request.onDelta, {
        runner,
        origin: { threadId: "bench", conversationId: 1, messageId: null, call: { id: "bench", appointment_opening_id: null }, context: {} },
        ...(request.onToolSpeech ? { onToolSpeech: request.onToolSpeech } : {}),
      }, request.signal);
      return { text: reply.text, toolCalls: reply.toolCalls, actions: reply.actions };
    },
    preamble: () => [{ role: "system", content: "You book visits." }],
    maxHistoryMessages: 20,
    record: async (utterances) => utterances.map((_, index) => String(index)),
    serialize: (work) => work(),
  });
  const transport: AudioTransport = {
    play: () => {
      const now = performance.now();
      firstFrame ??= now;
      if (fillerDone) answerFrame ??= now;
    },
    clear: () => undefined,
    // The filler is the reply's first sentence; the answer's audio follows its mark.
    mark: (name) => {
      if (name === "sentence-0") fillerDone = true;
    },
    notify: (notice) => {
      if (notice.type === "transcript" && notice.role === "agent" && notice.final) done();
    },
  };
  const pipeline = new VoicePipeline({
    agent,
    transport,
    speech: { stt, tts: new EspeakTts(pool, "en-us"), vad, turn: defaultTurnOptions, playback: transport, recorder: new CallRecorder() },
    failed: (stage, error) => console.error(stage, error),
    log: pino({ level: "silent" }),
  });
  started = performance.now();
  void pipeline.textTurn("Please book me for Tuesday.");
  await finished;
  await pipeline.stop();
  vad.close();
  const filler = (firstFrame ?? Number.NaN) - started;
  const answer = (answerFrame ?? Number.NaN) - started;
  toFiller.push(filler);
  toAnswer.push(answer);
  console.log(JSON.stringify({ turn, tool_ms: toolMs, to_filler_ms: Math.round(filler), to_answer_ms: Math.round(answer) }));
}
console.log(
  `voice turn with a tool (${toolMs} ms): filler phrase p50 ${Math.round(percentile(toFiller, 50))} ms, p99 ${Math.round(percentile(toFiller, 99))} ms; ` +
    `answer p50 ${Math.round(percentile(toAnswer, 50))} ms, p99 ${Math.round(percentile(toAnswer, 99))} ms`,
);
stt.close();
await pool.close();
await model.close();
receiver.close();
