import { Writable } from "node:stream";

/** pino's levels: warn is 40, error 50. */
export const warnLevel = 40;
export const errorLevel = 50;

/** The lines a pino logger writes here, parsed, for tests that check how something is logged. */
export class LogLines extends Writable {
  readonly lines: { level: number; msg: string }[] = [];
  override _write(chunk: Buffer, _encoding: BufferEncoding, done: () => void): void {
    for (const line of chunk.toString().split("\n").filter((text) => text !== "")) this.lines.push(JSON.parse(line) as { level: number; msg: string });
    done();
  }

  /** The lines written since `from` (a length of `lines` taken earlier) at `level` or above. */
  since(from: number, level: number): { level: number; msg: string }[] {
    return this.lines.slice(from).filter((line) => line.level >= level);
  }
}
