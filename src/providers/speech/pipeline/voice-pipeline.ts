import type { Logger } from "pino";
import type { CallAction } from "../../../domain/tools/ports.js";
import { concatSamples, FRAME_MS, FRAME_SAMPLES, framesOf, toPipelineRate } from "../audio.js";
import { isStreaming, type CallerVoice, type RecognitionStream, type SpeechToText } from "../stt.js";
import type { TextToSpeech } from "../tts.js";
import type { VoiceActivityDetector } from "../vad.js";
import { TurnDetector, type TurnDetectorOptions } from "./turn-detector.js";
import type { TranscriptItem, VoiceAgent } from "../../../domain/calls/ports.js";
import type { CallRecorder } from "./call-recorder.js";
import { readsComplete, spokenWords } from "./phrases.js";
import { SentenceSplitter, spokenPart } from "./sentences.js";
import type { AudioTransport, CallTransport } from "./transport.js";

/** The stages of a call that carries audio. A call in text mode has none of them. */
export interface SpeechStages {
  stt: SpeechToText;
  tts: TextToSpeech;
  vad: VoiceActivityDetector;
  turn: TurnDetectorOptions;
  /** Where the agent's speech is played: the call's transport. */
  playback: AudioTransport;
  /** Both sides of the call on one timeline, for its recording and timed transcript. */
  recorder: CallRecorder;
  /** How far ahead of real time agent audio is sent, so that the far end's playback never runs dry. */
  leadMs?: number;
  /** Words the recognizer should favour (stt.keywords, the knowledge, the greeting, the thread's context values). */
  phrases?: readonly string[];
}

export interface VoicePipelineOptions {
  agent: VoiceAgent;
  /** The far end, told the live transcript; without audio, it delivers the agent's turns from it. */
  transport: CallTransport;
  /** VAD, end of turn, STT, TTS, playback and the live recording; absent in text mode (`SPEECH_MODE=text`). */
  speech?: SpeechStages;
  /** A stage failed (the model, a speech vendor): the call cannot go on. `stage` says which. */
  failed(stage: "agent" | "stt" | "tts", error: unknown): void;
  /** Told of each agent turn's latency: from the end of the caller's speech to the first frame of the answer. */
  onTurnLatency?(ms: number): void;
  /**
   * The agent ended or transferred the call (`end_call`, `transfer_call`): told once its reply has been played (or
   * delivered) to the end, and not awaited (ending the call stops this pipeline, which waits for the turn).
   */
  onCallAction?(action: CallAction): void;
  log: Logger;
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

/** An agent turn being spoken as its text streams in. */
interface SpokenTurn {
  push(text: string): void;
  /** Words to say while a tool runs (`speak_during_execution`): a sentence of their own, after what came before. */
  interject(words: string): void;
  /** The text is all there (`complete`) or will not be: waits for the playback; what was said, if anything. */
  finish(complete: boolean): Promise<string | undefined>;
}

const defaultLeadMs = 100;

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * One call's conversation loop, as small stages: caller audio → VAD and end-of-turn → speech-to-text → the project's
 * agent (streamed) → text-to-speech sentence by sentence → paced playback through the transport. The first
 * sentence is spoken while the rest of the reply is still being generated. When the caller starts speaking during
 * the agent's turn (barge-in), the reply is cancelled, the far end's buffer cleared, and the transcript keeps only
 * what had been played. Both sides go into the call's recorder.
 *
 * A call in text mode runs the same loop without the audio stages: its transport gives each caller turn as a final
 * transcript (`textTurn`), and the agent's reply, streamed to the transport as transcript deltas, is delivered whole
 * when it is complete; the transcript, the history and the call actions are handled as for speech.
 *
 * A tool that runs during the reply may have words to say meanwhile (`speak_during_execution`): they are spoken as a
 * sentence of the reply, after what the model said before calling it, and a barge-in stops them like any other. An
 * `end_call` or `transfer_call` the model asked for is carried out after the reply's last sentence has been played;
 * a reply the caller interrupted carries out none (the caller had more to say).
 */
export class VoicePipeline {
  /** The audio stages with the call's turn detector: what hears a call that carries audio. */
  private readonly ear: { speech: SpeechStages; detector: TurnDetector } | undefined;
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
  /** What the recognizer has learnt of the caller's voice in this call's turns so far. */
  private readonly callerVoice: CallerVoice;

  constructor(private readonly options: VoicePipelineOptions) {
    const { speech } = options;
    const channel = speech?.playback.callerChannel;
    this.callerVoice = channel ? { channel } : {};
    this.ear = speech && { speech, detector: new TurnDetector(speech.vad, speech.turn, () => this.recognition !== undefined && readsComplete(this.recognition.partial())) };
  }

  /** Caller audio at 16 kHz, in frames of any size (re-cut into 20 ms frames here). */
  hear(samples: Int16Array): void {
    const ear = this.ear;
    if (this.stopped || !ear) return;
    const joined = new Int16Array(this.buffered.length + samples.length);
    joined.set(this.buffered);
    joined.set(samples, this.buffered.length);
    let start = 0;
    for (; start + FRAME_SAMPLES <= joined.length; start += FRAME_SAMPLES) this.frame(ear, joined.subarray(start, start + FRAME_SAMPLES));
    this.buffered = joined.slice(start);
  }

  /**
   * A caller's turn as text, which skips VAD and speech-to-text: typed by a client without a microphone, or any turn
   * of a call in text mode. Resolves once the turn is over: true when the call goes on to the caller's next turn;
   * false when the call is over (the agent ended or transferred it, a stage failed, the pipeline stopped) or the turn
   * was interrupted.
   */
  textTurn(text: string): Promise<boolean> {
    if (this.stopped) return Promise.resolve(false);
    this.bargeIn();
    return this.enqueue(() => this.answer(text, Date.now(), undefined));
  }

  /** The caller's last words before hanging up (a simulated caller's closing line): recorded, not answered; false once the call is over. */
  lastWords(text: string): Promise<boolean> {
    if (this.stopped) return Promise.resolve(false);
    this.bargeIn();
    return this.enqueue(async () => {
      this.heardCaller(text, undefined);
      try {
        return await this.options.agent.hear(this.transcript);
      } catch (error) {
        this.options.failed("agent", error);
        return false;
      }
    });
  }

  /** Says a fixed opening line (an inbound call's greeting) as the agent's first turn, without asking the model; resolves as `textTurn` does. */
  greet(text: string): Promise<boolean> {
    if (this.stopped) return Promise.resolve(false);
    return this.enqueue(async () => {
      const speaking = this.startSpeaking();
      let said: string | undefined = text;
      if (this.options.speech) {
        // No caller turn ended before a greeting: it has no turn latency.
        const spoken = this.speak(this.options.speech, speaking, undefined);
        spoken.push(text);
        said = await spoken.finish(true);
      }
      return this.finishSpeaking(speaking, said);
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
    return [...(this.options.speech?.phrases ?? []), ...spokenWords(this.agentLastSaid)];
  }

  private frame(ear: NonNullable<VoicePipeline["ear"]>, frame: Int16Array): void {
    const { speech, detector } = ear;
    const position = speech.recorder.callerFrame(frame);
    this.framePositions.push(position);
    const event = detector.push(frame);
    if (event?.type === "speech_started") {
      this.bargeIn();
      if (isStreaming(speech.stt)) {
        this.recognition = speech.stt.stream(this.phrases(), this.callerVoice);
        this.recognition.write(event.audio);
      }
      return;
    }
    if (event?.type !== "turn_ended") {
      if (detector.inSpeech) this.recognition?.write(frame);
      return;
    }
    const recognition = this.recognition;
    this.recognition = undefined;
    const endedAt = Date.now() - (detector.frameCount - event.endFrame) * FRAME_MS;
    // Anchored at the turn's last frame: a gap in delivery (a stalled stream) would sit before the speech, not in it.
    const lastFrame = event.startFrame - 1 + Math.round(event.audio.length / FRAME_SAMPLES) - 1;
    const offset = Math.max(0, (this.framePositions[lastFrame] ?? 0) + FRAME_SAMPLES - event.audio.length);
    const audio = event.audio;
    void this.enqueue(async () => {
      let text: string;
      try {
        text = (recognition ? await recognition.finish() : await speech.stt.transcribe(audio, undefined, this.phrases())).trim();
      } catch (error) {
        if (!this.stopped) this.options.failed("stt", error);
        return false;
      }
      if (text === "" || this.stopped) return false;
      return this.answer(text, endedAt, { audio, offset });
    });
  }

  /** Turns run one after another; a barge-in has already cancelled the one that was speaking. Resolves to the turn's outcome. */
  private enqueue(turn: () => Promise<boolean>): Promise<boolean> {
    const outcome = this.turnChain.then(turn).catch((error: unknown) => {
      this.options.log.error({ err: error }, "a voice turn failed");
      return false;
    });
    this.turnChain = outcome.then(() => undefined);
    return outcome;
  }

  /** Caller speech while the agent talks: stop the reply and what the far end has buffered. */
  private bargeIn(): void {
    const speaking = this.speaking;
    if (!speaking || speaking.interrupted) return;
    speaking.interrupted = true;
    speaking.controller.abort();
    this.options.speech?.playback.clear();
  }

  /** The caller's turn goes into the transcript and the recording, and back to the far end as its final transcript. */
  private heardCaller(text: string, heard: { audio: Int16Array; offset: number } | undefined): void {
    this.transcript.push({ role: "user", content: text });
    const recorder = this.options.speech?.recorder;
    if (recorder) recorder.utterance("user", text, heard?.audio ?? new Int16Array(0), heard?.offset ?? recorder.position());
    this.options.transport.notify({ type: "transcript", role: "user", text, final: true });
  }

  private async answer(text: string, endedAt: number, heard: { audio: Int16Array; offset: number } | undefined): Promise<boolean> {
    this.heardCaller(text, heard);
    const speaking = this.startSpeaking();
    const { signal } = speaking.controller;
    const spoken = this.options.speech ? this.speak(this.options.speech, speaking, endedAt) : undefined;
    const actions: CallAction[] = [];
    let reply: string | undefined;
    try {
      reply = await this.options.agent.respond(
        this.transcript,
        (delta) => {
          this.options.transport.notify({ type: "transcript", role: "agent", text: delta, final: false });
          spoken?.push(delta);
        },
        signal,
        {
          recordReply: false,
          // Words to say while a tool runs are for a caller who hears the agent.
          ...(spoken ? { onToolSpeech: (words: string) => spoken.interject(words) } : {}),
          onCallAction: (action) => actions.push(action),
        },
      );
    } catch (error) {
      if (!signal.aborted) this.options.failed("agent", error);
      speaking.controller.abort();
    }
    const complete = reply !== undefined && !signal.aborted;
    // Without audio the reply is delivered whole, as generated.
    const said = spoken ? await spoken.finish(complete) : complete ? reply : undefined;
    const recorded = await this.finishSpeaking(speaking, said);
    if (reply === undefined || speaking.interrupted || this.stopped) return false;
    if (actions.length === 0) return recorded;
    if (this.options.speech) {
      // What was sent ahead of real time is still playing at the far end.
      await sleep(this.options.speech.leadMs ?? defaultLeadMs);
      if (this.stopped) return false;
    }
    for (const action of actions) this.options.onCallAction?.(action);
    return false;
  }

  private startSpeaking(): Speaking {
    const speaking: Speaking = { controller: new AbortController(), spoken: [], current: undefined, audio: [], offset: undefined, interrupted: false };
    this.speaking = speaking;
    return speaking;
  }

  /** Speaks an agent turn as its text streams in: each sentence is synthesized once complete, and played in turn. */
  private speak(speech: SpeechStages, speaking: Speaking, endedAt: number | undefined): SpokenTurn {
    const splitter = new SentenceSplitter(200, true);
    const sentences: string[] = [];
    const synthesized: Promise<Int16Array | undefined>[] = [];
    let wake: (() => void) | undefined;
    let generating = true;
    const queue = (sentence: string) => {
      sentences.push(sentence);
      synthesized.push(this.synthesize(speech.tts, sentence, speaking));
      wake?.();
    };
    const playback = this.play(speech, speaking, sentences, synthesized, endedAt, () => generating, (resume) => {
      wake = resume;
    });
    return {
      push: (text) => {
        for (const sentence of splitter.push(text)) queue(sentence);
      },
      interject: (words) => {
        if (speaking.controller.signal.aborted) return;
        for (const sentence of splitter.flush()) queue(sentence);
        this.options.transport.notify({ type: "transcript", role: "agent", text: `${words} `, final: false });
        queue(words);
      },
      finish: async (complete) => {
        if (complete) for (const sentence of splitter.flush()) queue(sentence);
        generating = false;
        wake?.();
        await playback;
        const said = [...speaking.spoken, ...(speaking.current ? [spokenPart(speaking.current.sentence, speaking.current.fraction)] : [])].join(" ").trim();
        return said === "" ? undefined : said;
      },
    };
  }

  private synthesize(tts: TextToSpeech, sentence: string, speaking: Speaking): Promise<Int16Array | undefined> {
    const { signal } = speaking.controller;
    return tts.synthesize(sentence, signal).then(toPipelineRate, (error: unknown) => {
      if (!signal.aborted) this.options.failed("tts", error);
      speaking.controller.abort();
      return undefined;
    });
  }

  /**
   * What was said of the agent's turn goes into the transcript, the recording and the thread's history, and then to
   * the far end as the turn's final transcript, so that a client that has seen it finds it stored. False when the
   * call is over (nothing more is stored).
   */
  private async finishSpeaking(speaking: Speaking, said: string | undefined): Promise<boolean> {
    if (this.speaking === speaking) this.speaking = undefined;
    if (said === undefined) return true;
    this.transcript.push({ role: "agent", content: said });
    this.agentLastSaid = said;
    const recorder = this.options.speech?.recorder;
    if (recorder) recorder.utterance("agent", said, concatSamples(...speaking.audio), speaking.offset ?? recorder.position());
    let recorded = true;
    try {
      recorded = await this.options.agent.hear(this.transcript);
    } catch (error) {
      this.options.log.warn({ err: error }, "recording the agent's spoken reply failed");
    }
    await this.options.transport.notify({ type: "transcript", role: "agent", text: said, final: true });
    return recorded;
  }

  /** Plays each sentence's audio as it becomes ready, paced in real time with a small lead. */
  private async play(
    speech: SpeechStages,
    speaking: Speaking,
    sentences: string[],
    synthesized: Promise<Int16Array | undefined>[],
    endedAt: number | undefined,
    generating: () => boolean,
    onWake: (resume: () => void) => void,
  ): Promise<void> {
    const { signal } = speaking.controller;
    const leadMs = speech.leadMs ?? defaultLeadMs;
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
        speech.playback.play(frame);
        const offset = speech.recorder.agentFrame(frame);
        speaking.offset ??= offset;
        speaking.audio.push(frame);
        sent += 1;
        const due = clock + sent * FRAME_MS - leadMs;
        const wait = due - Date.now();
        if (wait > 0) await sleep(wait);
      }
      speech.playback.mark(`sentence-${index}`);
      speaking.spoken.push(sentence);
      speaking.current = undefined;
    }
  }
}
