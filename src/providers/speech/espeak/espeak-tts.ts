import type { PcmAudio } from "../audio.js";
import { SpeechUnavailableError } from "../errors.js";
import type { SpokenText, TextToSpeech } from "../tts.js";
import { alignWords, speechTokens } from "../word-timing.js";
import { EspeakWorker } from "./espeak-worker.js";

/**
 * A small pool of eSpeak NG workers (the npm `espeak-ng` WebAssembly build, an optional dependency: see
 * docs/voice-media.md for its licence). Each worker synthesizes one text at a time, so concurrent calls are spread
 * over the pool; workers start on first use.
 */
export class EspeakPool {
  private readonly workers: (Promise<EspeakWorker> | undefined)[];
  private readonly busy: number[];

  constructor(size = 2) {
    this.workers = Array.from({ length: Math.max(1, size) }, () => undefined);
    this.busy = this.workers.map(() => 0);
  }

  async speak(text: string, args: readonly string[]): Promise<PcmAudio> {
    let index = 0;
    for (let i = 1; i < this.busy.length; i++) if ((this.busy[i] ?? 0) < (this.busy[index] ?? 0)) index = i;
    this.busy[index] = (this.busy[index] ?? 0) + 1;
    try {
      return await (await this.worker(index)).speak(text, args);
    } finally {
      this.busy[index] = (this.busy[index] ?? 1) - 1;
    }
  }

  /** Throws SpeechUnavailableError when the package is not installed or does not run here. */
  async check(): Promise<void> {
    await this.worker(0);
  }

  /**
   * Like `check`, but leaves no worker behind when none was running: a worker (a thread with its own WebAssembly,
   * ~25 MB) is for calls that speak with eSpeak NG, not for a readiness probe.
   */
  async probe(): Promise<void> {
    if (this.workers.some((worker) => worker !== undefined)) return this.check();
    const worker = await EspeakWorker.start();
    if (!worker) throw notInstalled();
    await worker.close();
  }

  async close(): Promise<void> {
    const workers = this.workers.splice(0, this.workers.length, ...this.workers.map(() => undefined));
    await Promise.all(workers.map(async (worker) => (await worker?.catch(() => undefined))?.close()));
  }

  private worker(index: number): Promise<EspeakWorker> {
    let worker = this.workers[index];
    if (!worker) {
      worker = EspeakWorker.start().then((started) => {
        if (!started) throw notInstalled();
        return started;
      });
      worker.catch(() => {
        if (this.workers[index] === worker) this.workers[index] = undefined;
      });
      this.workers[index] = worker;
    }
    return worker;
  }
}

function notInstalled(): SpeechUnavailableError {
  return new SpeechUnavailableError("tts", "eSpeak NG is not installed: the optional npm package espeak-ng is missing (npm install without --omit=optional)");
}

export interface EspeakVoiceOptions {
  /** eSpeak's pitch, 0–99 (50 by default). */
  pitch?: number;
  wordsPerMinute?: number;
  /** eSpeak's `-g`: extra silence between words, in units of 10 ms, which helps `alignWords` find the boundaries. */
  wordGap?: number;
  /** Word timings with the audio, estimated by `alignWords` (eSpeak NG's command line reports none). */
  wordTimings?: boolean;
}

/** eSpeak NG as a TextToSpeech: `voice` as eSpeak names it, at 150 words a minute, which recognizers follow best. */
export class EspeakTts implements TextToSpeech {
  readonly name = "espeak";
  private readonly args: string[];

  constructor(
    private readonly pool: EspeakPool,
    voice = "en-us",
    private readonly options: EspeakVoiceOptions = {},
  ) {
    this.args = ["-v", voice, "-p", String(options.pitch ?? 50), "-s", String(options.wordsPerMinute ?? 150)];
    if (options.wordGap !== undefined) this.args.push("-g", String(options.wordGap));
  }

  async synthesize(text: string, signal?: AbortSignal): Promise<SpokenText> {
    signal?.throwIfAborted();
    const audio = await this.pool.speak(text, this.args);
    return this.options.wordTimings ? { ...audio, words: alignWords(audio, speechTokens(text)) } : audio;
  }
}
