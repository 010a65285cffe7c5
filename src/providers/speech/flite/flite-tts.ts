import { SpeechUnavailableError } from "../errors.js";
import { loadKoffi, onThreadPool, type Koffi, type NativeFunction } from "../native.js";
import type { SpokenText, TextToSpeech } from "../tts.js";
import { alignWords, speechTokens } from "../word-timing.js";

/** Flite's US English voices as Debian's libflite1 ships them: each a library of its own. */
export const FLITE_VOICES = ["awb", "rms", "slt", "kal16", "kal"] as const;
export type FliteVoice = (typeof FLITE_VOICES)[number];

interface Wave {
  sample_rate: number;
  num_samples: number;
  samples: unknown;
}

/**
 * Debian's libflite through an FFI, in this process: voices load once (their data is compiled into the libraries,
 * so loading is instant and shares pages across processes) and stay warm; each sentence is synthesized on libuv's
 * thread pool, one at a time, since flite's utterance processing is not documented as safe on two threads at once.
 */
export class Libflite {
  private static loaded: Libflite | undefined;
  private readonly voices = new Map<FliteVoice, unknown>();
  private readonly waveType: unknown;
  private readonly toWave: NativeFunction;
  private readonly deleteWave: NativeFunction;
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(private readonly koffi: Koffi) {
    const flite = koffi.load("libflite.so.1");
    this.waveType = koffi.struct("cst_wave", { type: "const char *", sample_rate: "int", num_samples: "int", num_channels: "int", samples: "int16_t *" });
    this.toWave = flite.func("cst_wave *flite_text_to_wave(const char *text, void *voice)");
    this.deleteWave = flite.func("void delete_wave(cst_wave *wave)");
    flite.func("int flite_init()")();
  }

  /** Throws SpeechUnavailableError when the FFI package or Debian's flite libraries are missing. */
  static load(): Libflite {
    if (Libflite.loaded) return Libflite.loaded;
    const koffi = loadKoffi("tts");
    try {
      Libflite.loaded = new Libflite(koffi);
    } catch {
      throw new SpeechUnavailableError("tts", "flite is not installed: apt-get install flite");
    }
    return Libflite.loaded;
  }

  private voice(name: FliteVoice): unknown {
    let voice = this.voices.get(name);
    if (voice === undefined) {
      try {
        voice = this.koffi.load(`libflite_cmu_us_${name}.so.1`).func(`void *register_cmu_us_${name}(const char *voxdir)`)(null);
      } catch {
        throw new SpeechUnavailableError("tts", `flite's ${name} voice is not installed: apt-get install flite`);
      }
      this.voices.set(name, voice);
    }
    return voice;
  }

  /** Checks that the voice loads, without synthesizing. */
  check(name: FliteVoice): void {
    this.voice(name);
  }

  speak(text: string, name: FliteVoice): Promise<{ samples: Int16Array; sampleRate: number }> {
    const voice = this.voice(name);
    const spoken = this.queue.then(async () => {
      const pointer = await onThreadPool<unknown>(this.toWave, text, voice);
      if (!pointer) throw new Error(`flite could not synthesize with its ${name} voice`);
      try {
        const wave = this.koffi.decode(pointer, this.waveType) as Wave;
        const samples = wave.num_samples > 0 ? (this.koffi.decode(wave.samples, this.koffi.array("int16_t", wave.num_samples, "Typed")) as Int16Array) : new Int16Array(0);
        return { samples: Int16Array.from(samples), sampleRate: wave.sample_rate };
      } finally {
        this.deleteWave(pointer);
      }
    });
    this.queue = spoken.catch(() => undefined);
    return spoken;
  }
}

/** Flite as a TextToSpeech: one of its voices, recorded from people, which the offline recognizer hears best. */
export class FliteTts implements TextToSpeech {
  readonly name = "flite";

  constructor(
    private readonly voice: FliteVoice,
    private readonly options: { wordTimings?: boolean } = {},
  ) {}

  async synthesize(text: string, signal?: AbortSignal): Promise<SpokenText> {
    signal?.throwIfAborted();
    const audio = await Libflite.load().speak(text, this.voice);
    return this.options.wordTimings ? { ...audio, words: alignWords(audio, speechTokens(text)) } : audio;
  }

  check(): void {
    Libflite.load().check(this.voice);
  }
}
