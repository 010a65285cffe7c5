import type { CallTransport } from "../../speech/pipeline/transport.js";
import type { VoicePipeline } from "../../speech/pipeline/voice-pipeline.js";
import { sleep } from "../carried-calls.js";

/**
 * The simulated person on the other end of a call in text mode, as the pipeline's transport: it says each line of its
 * script as a final transcript turn, `turnMs` after the agent has answered the one before, and hangs up after its
 * last line, which is recorded without an answer. It needs nothing of the agent's turns but their end.
 */
export class SimulatedTextCallee implements CallTransport {
  constructor(
    private readonly lines: string[],
    private readonly turnMs: number,
    private readonly signal: AbortSignal,
  ) {}

  notify(): void {}

  /** Says the script; true when the callee hangs up after its last line, false when the call ended first. */
  async run(pipeline: VoicePipeline): Promise<boolean> {
    for (const [index, line] of this.lines.entries()) {
      if (!(await sleep(this.turnMs, this.signal))) return false;
      if (index === this.lines.length - 1) return pipeline.lastWords(line);
      if (!(await pipeline.textTurn(line))) return false;
    }
    return sleep(this.turnMs, this.signal);
  }
}
