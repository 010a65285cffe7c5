import { EspeakSynthesizer } from "../voice/espeak-synthesizer.js";
import type { PcmAudio } from "./audio.js";
import { SpeechUnavailableError } from "./errors.js";
import type { TextToSpeech } from "./types.js";


/**
 * A small pool of eSpeak NG workers (the npm `espeak-ng` WebAssembly build, an optional dependency: see
 * docs/voice-media.md for its licence). Each worker synthesizes one text at a time, so concurrent calls are spread
 * over the pool; workers start on first use.
 */
export class EspeakPool {
  private readonly workers: (Promise<EspeakSynthesizer> | undefined)[];
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

  async close(): Promise<void> {
    const workers = this.workers.splice(0, this.workers.length, ...this.workers.map(() => undefined));
    await Promise.all(workers.map(async (worker) => (await worker?.catch(() => undefined))?.close()));
  }

  private worker(index: number): Promise<EspeakSynthesizer> {
    let worker = this.workers[index];
    if (!worker) {
      worker = EspeakSynthesizer.start().then((started) => {
        if (!started) throw new SpeechUnavailableError("tts", "eSpeak NG is not installed: the optional npm package espeak-ng is missing (npm install without --omit=optional)");
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

/** eSpeak NG as a TextToSpeech: `voice` as eSpeak names it, at 150 words a minute, which recognizers follow best. */
export class EspeakTts implements TextToSpeech {
  readonly name = "espeak";
  private readonly args: string[];

  constructor(
    private readonly pool: EspeakPool,
    voice = "en-us",
    options: { pitch?: number; wordsPerMinute?: number } = {},
  ) {
    this.args = ["-v", voice, "-p", String(options.pitch ?? 50), "-s", String(options.wordsPerMinute ?? 150)];
  }

  async synthesize(text: string, signal?: AbortSignal): Promise<PcmAudio> {
    signal?.throwIfAborted();
    return this.pool.speak(text, this.args);
  }
}
