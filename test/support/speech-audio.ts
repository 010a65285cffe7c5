import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { concatSamples, decodeWav, PIPELINE_SAMPLE_RATE, type PcmAudio, resample, StreamResampler } from "../../src/providers/speech/audio.js";
import type { FliteVoice } from "../../src/domain/projects/project-config.js";
import { FliteTts } from "../../src/providers/speech/flite/flite-tts.js";
import { decodeMuLaw, encodeMuLaw } from "../../src/providers/speech/mulaw.js";

const TELEPHONE_SAMPLE_RATE = 8_000;

export { concatSamples } from "../../src/providers/speech/audio.js";

const run = promisify(execFile);

/** Speech made by Debian's espeak-ng command line (not Parley's WebAssembly build), at `sampleRate`. */
export async function espeakCli(text: string, options: { sampleRate?: number; voice?: string } = {}): Promise<PcmAudio> {
  const { stdout } = await run("espeak-ng", ["-v", options.voice ?? "en-us", "-s", "150", "--stdout", text], { encoding: "buffer", maxBuffer: 64 * 1024 * 1024 });
  const audio = decodeWav(stdout);
  const rate = options.sampleRate ?? audio.sampleRate;
  return { sampleRate: rate, samples: resample(audio.samples, audio.sampleRate, rate) };
}

/**
 * A flite voice on a Twilio call, as the recognizer gets it: its speech brought to the call's 8 kHz by Parley's
 * resampler (`kal` is recorded at 8 kHz already), sent as 20 ms media frames of μ-law, each decoded and resampled to
 * the pipeline's rate as Parley's media session does.
 */
export async function fliteByTelephone(voice: FliteVoice, text: string): Promise<Int16Array> {
  const { samples, sampleRate } = await new FliteTts(voice).synthesize(text);
  const downsampler = new StreamResampler(sampleRate, TELEPHONE_SAMPLE_RATE);
  const upsampler = new StreamResampler(TELEPHONE_SAMPLE_RATE, PIPELINE_SAMPLE_RATE);
  const frame = sampleRate / 50;
  const frames: Int16Array[] = [];
  for (let at = 0; at < samples.length; at += frame) {
    const piece = samples.subarray(at, at + frame);
    const narrow = sampleRate === TELEPHONE_SAMPLE_RATE ? piece : downsampler.push(piece);
    frames.push(upsampler.push(decodeMuLaw(encodeMuLaw(narrow))));
  }
  return concatSamples(...frames);
}

/** flite `kal` on a Twilio call. */
export const kalByTelephone = (text: string) => fliteByTelephone("kal", text);

export function silence(ms: number, sampleRate = 16_000): Int16Array {
  return new Int16Array(Math.round((ms * sampleRate) / 1000));
}


/** Lower-case words without punctuation, for comparing what a recognizer heard. */
export function wordsOf(text: string): string[] {
  return text.toLowerCase().split(/[^a-z0-9']+/).filter((word) => word !== "");
}
