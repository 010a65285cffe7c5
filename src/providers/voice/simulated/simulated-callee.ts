import { FRAME_MS, FRAME_SAMPLES, framesOf, toPipelineRate } from "../../speech/audio.js";
import type { AudioTransport, PipelineNotice } from "../../speech/pipeline/transport.js";
import type { TextToSpeech } from "../../speech/tts.js";

/** How long the callee waits on the agent before going on as a person would. */
export interface CalleePatience {
  /** From the end of a line to its transcript: the end of the turn and recognition, with room for a busy machine. */
  heardMs: number;
  /** From being heard to the end of the agent's spoken answer. */
  answerMs: number;
}

export const defaultCalleePatience: CalleePatience = { heardMs: 10_000, answerMs: 30_000 };

export interface SimulatedCalleeOptions {
  lines: string[];
  /** The callee's voice. */
  tts: TextToSpeech;
  /** Silence before each line. */
  turnMs: number;
  /** Where the callee's audio goes: the pipeline's ear. */
  hear(frame: Int16Array): void;
  signal: AbortSignal;
  patience?: CalleePatience;
  /** A caller who rang: the agent answers with its greeting, which the caller hears out before its first line. */
  agentSpeaksFirst?: boolean;
}

/**
 * The simulated person on the other end of a phone call, as a real one would be: it speaks each line of its script
 * as audio in real time (silence in between, since a telephone line is never without frames), and says its next line
 * `turnMs` after the agent has finished answering the last one. After its last line it waits to be heard, then hangs
 * up. It is also the pipeline's transport, and takes its turns from the pipeline's transcript: a line is heard when
 * its transcript comes, and the agent's answer is over when the answer's final transcript comes, which the pipeline
 * sends once the answer has been played. A line that is never heard (the recognizer made nothing of it) or an
 * answer that never ends is waited for only as long as `patience` says.
 */
export class SimulatedCallee implements AudioTransport {
  private heardTurns = 0;
  private answeredTurns = 0;
  private clips: Promise<Int16Array | undefined>[] = [];
  private prepared: Promise<boolean> | undefined;
  private clock = 0;
  private sent = 0;

  constructor(private readonly options: SimulatedCalleeOptions) {}

  play(): void {}

  clear(): void {}

  mark(): void {}

  notify(notice: PipelineNotice): void {
    if (notice.type !== "transcript" || !notice.final) return;
    if (notice.role === "user") this.heardTurns += 1;
    else this.answeredTurns += 1;
  }

  /**
   * Makes the script's speech, line after line. Resolves once every line is ready (false when the call was aborted
   * meanwhile); the provider lets the phone ring until then, since a person who answers speaks at once, and so that
   * the callee's voice does not compete with the call's own recognition and synthesis for the machine.
   */
  prepare(): Promise<boolean> {
    this.prepared ??= this.makeSpeech();
    return this.prepared;
  }

  private async makeSpeech(): Promise<boolean> {
    let previous: Promise<unknown> = Promise.resolve();
    this.clips = this.options.lines.map((line) => {
      const clip = previous.then(() => this.synthesize(line));
      previous = clip;
      return clip;
    });
    // A failure is thrown where the line is awaited; the lines after it are never made.
    for (const clip of this.clips) clip.catch(() => undefined);
    return (await Promise.all(this.clips)).every((clip) => clip !== undefined);
  }

  /** Speaks the script; resolves true when the callee hangs up after its last line, false when aborted. */
  async run(): Promise<boolean> {
    const { turnMs, signal } = this.options;
    const patience = this.options.patience ?? defaultCalleePatience;
    // Speech is made from here if the provider did not start it while the phone rang; each line is awaited below.
    this.prepare().catch(() => undefined);
    this.clock = Date.now();
    if (this.options.agentSpeaksFirst) await this.silenceUntil(() => this.answeredTurns > 0, patience.answerMs);
    for (const [index, clip] of this.clips.entries()) {
      const audio = await this.silenceWhileMaking(clip);
      if (!audio || !(await this.silence(turnMs))) return false;
      const heardBefore = this.heardTurns;
      const answeredBefore = this.answeredTurns;
      for (const frame of framesOf(audio)) if (!(await this.send(frame))) return false;
      const heard = await this.silenceUntil(() => this.heardTurns > heardBefore, patience.heardMs);
      if (index === this.clips.length - 1) break;
      if (heard) await this.silenceUntil(() => this.answeredTurns > answeredBefore, patience.answerMs);
    }
    return !signal.aborted;
  }

  private async synthesize(line: string): Promise<Int16Array | undefined> {
    const { tts, signal } = this.options;
    if (signal.aborted) return undefined;
    try {
      return toPipelineRate(await tts.synthesize(line, signal));
    } catch (error) {
      if (signal.aborted) return undefined;
      throw error;
    }
  }

  /** The line stays open with silence while a line's speech is still being made; the speech, or undefined when aborted. */
  private async silenceWhileMaking(clip: Promise<Int16Array | undefined>): Promise<Int16Array | undefined> {
    let made = false;
    const settle = () => {
      made = true;
    };
    clip.then(settle, settle);
    if (!(await this.silenceUntil(() => made, Number.POSITIVE_INFINITY))) return undefined;
    return clip;
  }

  private async silence(ms: number): Promise<boolean> {
    const end = Date.now() + ms;
    await this.silenceUntil(() => Date.now() >= end, ms + 1000);
    return !this.options.signal.aborted;
  }

  /** Sends silence until `done` holds or `timeoutMs` passes; whether `done` held (false when the call was aborted). */
  private async silenceUntil(done: () => boolean, timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!done() && Date.now() < deadline) if (!(await this.send(new Int16Array(FRAME_SAMPLES)))) return false;
    return done();
  }

  /** One 20 ms frame at its moment in real time. */
  private async send(frame: Int16Array): Promise<boolean> {
    if (this.options.signal.aborted) return false;
    this.options.hear(frame);
    this.sent += 1;
    const wait = this.clock + this.sent * FRAME_MS - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    return !this.options.signal.aborted;
  }
}
