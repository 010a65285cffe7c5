import { FRAME_MS, FRAME_SAMPLES, framesOf, toPipelineRate } from "../../speech/audio.js";
import type { AudioTransport, PipelineNotice } from "../../speech/pipeline/transport.js";
import type { TextToSpeech } from "../../speech/tts.js";

export interface SimulatedCalleeOptions {
  lines: string[];
  /** The callee's voice. */
  tts: TextToSpeech;
  /** Silence before each line. */
  turnMs: number;
  /** Where the callee's audio goes: the pipeline's ear. */
  hear(frame: Int16Array): void;
  signal: AbortSignal;
  /** How long the callee waits to be heard, and then for the agent to finish answering, before going on anyway. */
  patienceMs?: number;
}

/**
 * The simulated person on the other end of a phone call, as a real one would be: it speaks each line of its script
 * as audio in real time (silence in between, since a telephone line is never without frames), listens to the
 * agent's audio, and says its next line once the agent has finished answering. After its last line it waits to be
 * heard, then hangs up. It is also the pipeline's transport: the agent's audio comes to it.
 */
export class SimulatedCallee implements AudioTransport {
  private heardTurns = 0;
  private lastAgentFrameAt = 0;
  private agentFramesThisTurn = 0;
  private clock = 0;
  private sent = 0;

  constructor(private readonly options: SimulatedCalleeOptions) {}

  play(): void {
    this.lastAgentFrameAt = Date.now();
    this.agentFramesThisTurn += 1;
  }

  clear(): void {}

  mark(): void {}

  notify(notice: PipelineNotice): void {
    if (notice.type === "transcript" && notice.role === "user" && notice.final) this.heardTurns += 1;
  }

  /** Speaks the script; resolves true when the callee hangs up after its last line, false when aborted. */
  async run(): Promise<boolean> {
    const { lines, tts, turnMs, signal } = this.options;
    const patience = this.options.patienceMs ?? 30_000;
    const ready: (Int16Array | undefined)[] = lines.map(() => undefined);
    const speech = lines.map((line, index) =>
      tts.synthesize(line, signal).then((audio) => {
        ready[index] = toPipelineRate(audio);
        return ready[index];
      }),
    );
    speech.forEach((clip) => clip.catch(() => undefined));
    this.clock = Date.now();
    for (const [index, clip] of speech.entries()) {
      // The line stays silent while its speech is being made: a telephone line never stops sending frames.
      if (!(await this.silenceUntil(() => ready[index] !== undefined, patience * 2))) await clip;
      if (!(await this.silence(turnMs))) return false;
      for (const frame of framesOf(await clip)) if (!(await this.send(frame))) return false;
      this.agentFramesThisTurn = 0;
      const heard = await this.silenceUntil(() => this.heardTurns > index, patience);
      if (!heard) continue;
      if (index === lines.length - 1) return !signal.aborted;
      // The agent answers: wait for its audio to start, then for 300 ms without any.
      await this.silenceUntil(() => this.agentFramesThisTurn > 0 && Date.now() - this.lastAgentFrameAt > 300, patience * 3);
    }
    return !signal.aborted;
  }

  private async silence(ms: number): Promise<boolean> {
    const end = Date.now() + ms;
    return this.silenceUntil(() => Date.now() >= end, ms + 1000);
  }

  /** Sends silence until `done` holds; false only when the call was aborted. */
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
