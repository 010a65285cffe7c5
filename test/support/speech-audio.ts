import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { decodeWav, type PcmAudio, resample } from "../../src/providers/speech/audio.js";

export { concatSamples } from "../../src/providers/speech/audio.js";

const run = promisify(execFile);

/** Speech made by Debian's espeak-ng command line (not Parley's WebAssembly build), at `sampleRate`. */
export async function espeakCli(text: string, options: { sampleRate?: number; voice?: string } = {}): Promise<PcmAudio> {
  const { stdout } = await run("espeak-ng", ["-v", options.voice ?? "en-us", "-s", "150", "--stdout", text], { encoding: "buffer", maxBuffer: 64 * 1024 * 1024 });
  const audio = decodeWav(stdout);
  const rate = options.sampleRate ?? audio.sampleRate;
  return { sampleRate: rate, samples: resample(audio.samples, audio.sampleRate, rate) };
}

export function silence(ms: number, sampleRate = 16_000): Int16Array {
  return new Int16Array(Math.round((ms * sampleRate) / 1000));
}


/** Lower-case words without punctuation, for comparing what a recognizer heard. */
export function wordsOf(text: string): string[] {
  return text.toLowerCase().split(/[^a-z0-9']+/).filter((word) => word !== "");
}
