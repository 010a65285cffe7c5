import { EspeakPool, EspeakTts } from "./espeak/espeak-tts.js";
import { ToneTts } from "./tone/tone-tts.js";
import type { TextToSpeech } from "./tts.js";

/** The voices a call's recording is rendered with after the call, one per side, told apart by ear. */
export interface RecordingVoices {
  readonly name: string;
  agent: TextToSpeech;
  user: TextToSpeech;
  /** Releases what the voices hold (eSpeak NG's worker thread); synthesizing again afterwards starts anew. */
  close(): Promise<void>;
}

/**
 * eSpeak NG's voices: a lower male variant for the agent, a higher female one for the caller. `-g 3` puts 30 ms of
 * silence between words, little enough to sound natural and enough for the word-timing alignment to find most
 * boundaries (see `alignWords`).
 */
export function espeakRecordingVoices(pool: EspeakPool): RecordingVoices {
  return {
    name: "espeak-ng",
    agent: new EspeakTts(pool, "en-us+m3", { pitch: 40, wordsPerMinute: 165, wordGap: 3, wordTimings: true }),
    user: new EspeakTts(pool, "en-us+f3", { pitch: 60, wordsPerMinute: 175, wordGap: 3, wordTimings: true }),
    close: () => pool.close(),
  };
}

export function toneRecordingVoices(): RecordingVoices {
  return { name: "vowel-tones", agent: new ToneTts("lower"), user: new ToneTts("higher"), close: async () => undefined };
}

/**
 * eSpeak NG when its optional package is installed and runs here, else the built-in tone voices. eSpeak NG is
 * GPL-3.0, so Parley never imports it statically: it is loaded, in a worker thread, only when present.
 */
export async function createRecordingVoices(): Promise<RecordingVoices> {
  const pool = new EspeakPool(1);
  try {
    await pool.check();
    return espeakRecordingVoices(pool);
  } catch {
    await pool.close();
    return toneRecordingVoices();
  }
}
