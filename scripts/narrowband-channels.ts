/**
 * The narrowband channels the recognizer's narrowband callers come through, rendered from a wideband voice's WAV file
 * for scripts/train-narrowband-map.ts and scripts/train-narrowband-adaptation.ts.
 */
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { StreamResampler, concatSamples, decodeWav } from "../src/providers/speech/audio.js";
import { decodeMuLaw, encodeMuLaw } from "../src/providers/speech/mulaw.js";
import type { NarrowbandChannel } from "../src/providers/speech/pocketsphinx/narrowband.js";

export const run = promisify(execFile);

export type Channel = (wav: string, folder: string) => Promise<Int16Array>;

export const samplesOf = async (wav: string) => decodeWav(await readFile(wav)).samples;

/**
 * 8 kHz audio resampled to 16 kHz by sox, as the benchmark's `kal` is: nothing above 4 kHz but sox's dither, here with
 * a fixed seed (`-R`), so that the scripts write the same files every time.
 */
const resampled: Channel = async (wav, folder) => {
  const narrow = path.join(folder, "narrow-8k.wav");
  const back = path.join(folder, "narrow-16k.wav");
  await run("sox", ["-R", wav, "-r", "8000", narrow]);
  await run("sox", ["-R", narrow, "-r", "16000", "-c", "1", "-b", "16", back]);
  return samplesOf(back);
};

/** A Twilio call: 8 kHz μ-law, converted by Parley's own resampler both ways, 20 ms frames, its 16-sample delay undone. */
const TELEPHONE_DELAY = 16;
const telephone: Channel = async (wav) => {
  const wide = await samplesOf(wav);
  const down = new StreamResampler(16_000, 8_000);
  const up = new StreamResampler(8_000, 16_000);
  const frames: Int16Array[] = [];
  for (let at = 0; at < wide.length; at += 320) frames.push(up.push(decodeMuLaw(encodeMuLaw(down.push(wide.subarray(at, at + 320))))));
  return concatSamples(...frames).subarray(TELEPHONE_DELAY);
};

export const CHANNELS: Record<NarrowbandChannel, Channel> = { resampled, telephone };

/** The wideband voices the narrowband files are learnt from: not `kal16`, the speaker of `kal`, on which they are measured. */
export const TRAINING_VOICES = ["rms", "awb", "slt"];

export const trainingSentences = async () =>
  (JSON.parse(await readFile(new URL("../bench/speech/narrowband-training.json", import.meta.url), "utf8")) as { sentences: string[] }).sentences;
