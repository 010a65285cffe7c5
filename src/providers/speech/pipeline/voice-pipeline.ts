import type { Logger } from "pino";
import type { CallAction } from "../../../domain/tools/ports.js";
import { concatSamples, FRAME_MS, FRAME_SAMPLES, framesOf, toPipelineRate } from "../audio.js";
import { isStreaming, type RecognitionStream, type SpeechToText } from "../stt.js";
import type { TextToSpeech } from "../tts.js";
import type { VoiceActivityDetector } from "../vad.js";
import { TurnDetector, type TurnDetectorOptions } from "./turn-detector.js";
import type { TranscriptItem, VoiceAgent } from "../../../domain/calls/ports.js";
import type { CallRecorder } from "./call-recorder.js";
import { readsComplete, spokenWords } from "./phrases.js";
import { SentenceSplitter, spokenPart } from "./sentences.js";
import type { AudioTransport } from "./transport.js";

export interface VoicePipelineOptions {
  agent: VoiceAgent;
  stt: SpeechToText;
  tts: TextToSpeech;
  vad: VoiceActivityDetector;
  turn: TurnDetectorOptions;
  transport: AudioTransport;
  recorder: CallRecorder;
  /** A stage failed (the model, a speech vendor): the call cannot go on. `stage` says which. */
  failed(stage: "agent" | "stt" | "tts", error: unknown): void;
  /** Told of each agent turn's latency: from the end of the caller's speech to the first frame of the answer. */
  onTurnLatency?(ms: number): void;
  /**
   * The agent ended or transferred the call (`end_call`, `transfer_call`): told once its reply has been played to the
   * end, and not awaited (ending the call stops this pipeline, which waits for the turn).
   */
  onCallAction?(action: CallAction): void;
  log: Logger;
  /** How far ahead of real time agent audio is sent, so that the far end's playback never runs dry. */
  leadMs?: number;
  /** Words the recognizer should favour (stt.keywords, the knowledge, the greeting, the thread's context values). */
  phrases?: readonly string[];
}

interface Speaking {
  controller: AbortController;
  /** Sentences fully played so far, and the one playing with how much of it has been played. */
  spoken: string[];
  current: { sentence: string; fraction: number } | undefined;
  /** The agent's audio so far, where it started on the recording, for the transcript's word timings. */
  audio: Int16Array[];
  offset: number | undefined;
  interrupted: boolean;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * One call's speech pipeline, as small stages: caller audio → VAD and end-of-turn → speech-to-text → the project's
 * agent (streamed) → text-to-speech sentence by sentence → paced playback through the transport. The first
 * sentence is spoken while the rest of the reply is still being generated. When the caller starts speaking during
 * the agent's turn (barge-in), the reply is cancelled, the far end's buffer cleared, and the transcript keeps only
 * what had been played. Both sides go into the call's recorder.
 *
 * A tool that runs during the reply may have words to say meanwhile (`speak_during_execution`): they are spoken as a
 * sentence of the reply, after what the model said before calling it, and a barge-in stops them like any other. An
 * `end_call` or `transfer_call` the model asked for is carried out after the reply's last sentence has been played;
 * a reply the caller interrupted carries out none (the caller had more to say).
 */
export class VoicePipeline {
  private readonly detector: TurnDetector;
  private readonly transcript: TranscriptItem[] = [];
  private readonly framePositions: number[] = [];
  private buffered = new Int16Array(0);
  private turnChain: Promise<void> = Promise.resolve();
  private speaking: Speaking | undefined;
  private stopped = false;
  /** The caller's turn being recognized while it is spoken, with a recognizer that streams. */
  private recognition: RecognitionStream | undefined;
  /** What the agent said last: the caller's answer often repeats its words, so the recognizer favours them. */
  private agentLastSaid = "";

  constructor(private readonly options: VoicePipelineOptions) {
    this.detector = new TurnDetector(options.vad, options.turn, () => this.recognition !== undefined && readsComplete(this.recognition.partial()));
  }

  /** Caller audio at 16 kHz, in frames of any size (re-cut into 20 ms frames here). */
  hear(samples: Int16Array): void {
    if (this.stopped) return;
    const joined = new Int16Array(this.buffered.length + samples.length);
    joined.set(this.buffered);
    joined.set(samples, this.buffered.length);
    let start = 0;
    for (; start + FRAME_SAMPLES <= joined.length; start += FRAME_SAMPLES) this.frame(joined.subarray(start, start + FRAME_SAMPLES));
    this.buffered = joined.slice(start);
  }

  /** A typed turn from a client without a microphone: it skips VAD and speech-to-text. */
  textTurn(text: string): void {
    if (this.stopped) return;
    this.bargeIn();
    this.enqueue(async () => this.answer(text, Date.now(), undefined));
  }

  /** Speaks a fixed opening line (an inbound call's greeting) as the agent's first turn, without asking the model. */
  greet(text: string): void {
    if (this.stopped) return;
    this.enqueue(async () => {
      const speaking = this.startSpeaking();
      const sentences: string[] = [];
      const synthesized: Promise<Int16Array | undefined>[] = [];
      const splitter = new SentenceSplitter(200, true);
      for (const sentence of [...splitter.push(text), ...splitter.flush()]) {
        sentences.push(sentence);
        synthesized.push(this.synthesize(sentence, speaking));
      }
      // No caller turn ended before a greeting: it has no turn latency.
      await this.play(speaking, sentences, synthesized, undefined, () => false, () => undefined);
      await this.finishSpeaking(speaking);
    });
  }

  /** Stops listening and speaking (the call is ending); resolves once the turn in progress has wound down. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.recognition?.cancel();
    this.recognition = undefined;
    this.bargeIn();
    await this.turnChain;
  }

  private phrases(): string[] {
    return [...(this.options.phrases ?? []), ...spokenWords(this.agentLastSaid)];
  }

  private frame(frame: Int16Array): void {
    const position = this.options.recorder.callerFrame(frame);
    this.framePositions.push(position);
    const event = this.detector.push(frame);
    if (event?.type === "speech_started") {
      this.bargeIn();
      const { stt } = this.options;
      if (isStreaming(stt)) {
        this.recognition = stt.stream(this.phrases());
        this.recognition.write(event.audio);
      }
      return;
    }
    if (event?.type !== "turn_ended") {
      if (this.detector.inSpeech) this.recognition?.write(frame);
      return;
    }
    const recognition = this.recognition;
    this.recognition = undefined;
    const endedAt = Date.now() - (this.detector.frameCount - event.endFrame) * FRAME_MS;
    // Anchored at the turn's last frame: a gap in delivery (a stalled stream) would sit before the speech, not in it.
    const lastFrame = event.startFrame - 1 + Math.round(event.audio.length / FRAME_SAMPLES) - 1;
    const offset = Math.max(0, (this.framePositions[lastFrame] ?? 0) + FRAME_SAMPLES - event.audio.length);
    const audio = event.audio;
    this.enqueue(async () => {
      let text: string;
      try {
        text = (recognition ? await recognition.finish() : await this.options.stt.transcribe(audio, undefined, this.phrases())).trim();
      } catch (error) {
        if (!this.stopped) this.options.failed("stt", error);
        return;
      }
      if (text === "" || this.stopped) return;
      await this.answer(text, endedAt, { audio, offset });
    });
  }

  /** Turns run one after another; a barge-in has already cancelled the one that was speaking. */
  private enqueue(turn: () => Promise<void>): void {
    this.turnChain = this.turnChain.then(turn).catch((error: unknown) => this.options.log.error({ err: error }, "a voice turn failed"));
  }

  /** Caller speech while the agent talks: stop the reply and what the far end has buffered. */
  private bargeIn(): void {
    const speaking = this.speaking;
    if (!speaking || speaking.interrupted) return;
    speaking.interrupted = true;
    speaking.controller.abort();
    this.options.transport.clear();
  }

  private async answer(text: string, endedAt: number, heard: { audio: Int16Array; offset: number } | undefined): Promise<void> {
    this.transcript.push({ role: "user", content: text });
    this.options.recorder.utterance("user", text, heard?.audio ?? new Int16Array(0), heard?.offset ?? this.options.recorder.position());
    this.options.transport.notify({ type: "transcript", role: "user", text, final: true });
    const speaking = this.startSpeaking();
    const { signal } = speaking.controller;
    const splitter = new SentenceSplitter(200, true);
    const synthesized: Promise<Int16Array | undefined>[] = [];
    const sentences: string[] = [];
    let wake: (() => void) | undefined;
    let generating = true;
    const queue = (sentence: string) => {
      sentences.push(sentence);
      synthesized.push(this.synthesize(sentence, speaking));
      wake?.();
    };
    const playback = this.play(speaking, sentences, synthesized, endedAt, () => generating, (resume) => {
      wake = resume;
    });
    const actions: CallAction[] = [];
    let reply: string | undefined;
    try {
      reply = await this.options.agent.respond(
        this.transcript,
        (delta) => {
          this.options.transport.notify({ type: "transcript", role: "agent", text: delta, final: false });
          for (const sentence of splitter.push(delta)) queue(sentence);
        },
        signal,
        {
          recordReply: false,
          onToolSpeech: (filler) => {
            if (signal.aborted) return;
            for (const sentence of splitter.flush()) queue(sentence);
            this.options.transport.notify({ type: "transcript", role: "agent", text: `${filler} `, final: false });
            queue(filler);
          },
          onCallAction: (action) => actions.push(action),
        },
      );
    } catch (error) {
      if (!signal.aborted) this.options.failed("agent", error);
      speaking.controller.abort();
    }
    if (reply !== undefined && !signal.aborted) for (const sentence of splitter.flush()) queue(sentence);
    generating = false;
    wake?.();
    await playback;
    await this.finishSpeaking(speaking);
    if (actions.length === 0 || reply === undefined || speaking.interrupted || this.stopped) return;
    // What was sent ahead of real time is still playing at the far end.
    await sleep(this.options.leadMs ?? 100);
    if (this.stopped) return;
    for (const action of actions) this.options.onCallAction?.(action);
  }

  private startSpeaking(): Speaking {
    const speaking: Speaking = { controller: new AbortController(), spoken: [], current: undefined, audio: [], offset: undefined, interrupted: false };
    this.speaking = speaking;
    return speaking;
  }

  private synthesize(sentence: string, speaking: Speaking): Promise<Int16Array | undefined> {
    const { signal } = speaking.controller;
    return this.options.tts.synthesize(sentence, signal).then(toPipelineRate, (error: unknown) => {
      if (!signal.aborted) this.options.failed("tts", error);
      speaking.controller.abort();
      return undefined;
    });
  }

  /** What was played of the agent's turn goes into the transcript, the recording and the thread's history. */
  private async finishSpeaking(speaking: Speaking): Promise<void> {
    if (this.speaking === speaking) this.speaking = undefined;
    const said = [...speaking.spoken, ...(speaking.current ? [spokenPart(speaking.current.sentence, speaking.current.fraction)] : [])].join(" ").trim();
    if (said === "") return;
    this.transcript.push({ role: "agent", content: said });
    this.agentLastSaid = said;
    const audio = concatSamples(...speaking.audio);
    this.options.recorder.utterance("agent", said, audio, speaking.offset ?? this.options.recorder.position());
    this.options.transport.notify({ type: "transcript", role: "agent", text: said, final: true });
    try {
      await this.options.agent.hear(this.transcript);
    } catch (error) {
      this.options.log.warn({ err: error }, "recording the agent's spoken reply failed");
    }
  }

  /** Plays each sentence's audio as it becomes ready, paced in real time with a small lead. */
  private async play(
    speaking: Speaking,
    sentences: string[],
    synthesized: Promise<Int16Array | undefined>[],
    endedAt: number | undefined,
    generating: () => boolean,
    onWake: (resume: () => void) => void,
  ): Promise<void> {
    const { signal } = speaking.controller;
    const leadMs = this.options.leadMs ?? 100;
    let clock: number | undefined;
    let sent = 0;
    for (let index = 0; ; index++) {
      while (index >= synthesized.length && generating() && !signal.aborted) await new Promise<void>((resume) => onWake(resume));
      if (index >= synthesized.length || signal.aborted) return;
      const audio = await synthesized[index];
      const sentence = sentences[index] ?? "";
      if (!audio || signal.aborted) return;
      speaking.current = { sentence, fraction: 0 };
      const frames = [...framesOf(audio)];
      for (const [count, frame] of frames.entries()) {
        if (signal.aborted) {
          // What the far end had buffered is cleared too: played is what was sent, less the lead.
          const buffered = Math.min(count, leadMs / FRAME_MS);
          speaking.current = { sentence, fraction: Math.max(0, count - buffered) / frames.length };
          return;
        }
        if (clock === undefined) {
          clock = Date.now();
          if (endedAt !== undefined) this.options.onTurnLatency?.(clock - endedAt);
          this.options.transport.notify({ type: "agent_speaking" });
        }
        this.options.transport.play(frame);
        const offset = this.options.recorder.agentFrame(frame);
        speaking.offset ??= offset;
        speaking.audio.push(frame);
        sent += 1;
        const due = clock + sent * FRAME_MS - leadMs;
        const wait = due - Date.now();
        if (wait > 0) await sleep(wait);
      }
      this.options.transport.mark(`sentence-${index}`);
      speaking.spoken.push(sentence);
      speaking.current = undefined;
    }
  }
}

