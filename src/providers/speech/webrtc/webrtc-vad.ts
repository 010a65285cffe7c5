import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { PIPELINE_SAMPLE_RATE } from "../audio.js";
import { SpeechUnavailableError } from "../errors.js";
import type { VoiceActivityDetector } from "../vad.js";

/** The part of the Emscripten module of `@echogarden/fvad-wasm` (libfvad, WebRTC's VAD) that Parley calls. */
interface FvadModule {
  HEAP16: Int16Array;
  _fvad_new(): number;
  _fvad_free(handle: number): void;
  _fvad_set_mode(handle: number, mode: number): number;
  _fvad_set_sample_rate(handle: number, rate: number): number;
  _fvad_process(handle: number, frame: number, length: number): number;
  _malloc(bytes: number): number;
  _free(pointer: number): void;
}

function isFvadModule(value: unknown): value is FvadModule {
  return typeof value === "object" && value !== null && typeof (value as { _fvad_new?: unknown })._fvad_new === "function";
}

let shared: Promise<FvadModule> | undefined;

/** One WebAssembly instance per process (20 KB); every call gets its own detector state inside it. */
function loadFvad(): Promise<FvadModule> {
  shared ??= (async () => {
    const url = pathToFileURL(createRequire(import.meta.url).resolve("@echogarden/fvad-wasm")).href;
    const factory: unknown = (await import(url)).default;
    if (typeof factory !== "function") throw new Error("@echogarden/fvad-wasm exports no module factory");
    const module: unknown = await factory();
    if (!isFvadModule(module)) throw new Error("@echogarden/fvad-wasm did not instantiate");
    return module;
  })().catch((error: unknown) => {
    shared = undefined;
    throw new SpeechUnavailableError("vad", `WebRTC VAD (@echogarden/fvad-wasm) could not be loaded: ${error instanceof Error ? error.message : String(error)}`);
  });
  return shared;
}

/**
 * WebRTC's voice activity detector (libfvad: a Gaussian mixture model over six frequency bands, trained by the
 * WebRTC project and compiled into the package), the VAD of most real-time voice stacks. Frames must be 10, 20 or
 * 30 ms. `aggressiveness` 0–3: higher means fewer non-speech frames taken for speech.
 */
export class WebRtcVad implements VoiceActivityDetector {
  private closed = false;

  private constructor(
    private readonly module: FvadModule,
    private readonly handle: number,
    private readonly buffer: number,
    private readonly capacity: number,
  ) {}

  static async create(options: { sampleRate?: number; aggressiveness?: number; maxFrameSamples?: number } = {}): Promise<WebRtcVad> {
    const module = await loadFvad();
    const handle = module._fvad_new();
    if (handle === 0) throw new SpeechUnavailableError("vad", "WebRTC VAD: out of memory");
    const rate = options.sampleRate ?? PIPELINE_SAMPLE_RATE;
    if (module._fvad_set_sample_rate(handle, rate) !== 0 || module._fvad_set_mode(handle, options.aggressiveness ?? 3) !== 0) {
      module._fvad_free(handle);
      throw new Error(`WebRTC VAD does not take ${rate} Hz or aggressiveness ${options.aggressiveness}`);
    }
    const capacity = options.maxFrameSamples ?? (rate * 30) / 1000;
    return new WebRtcVad(module, handle, module._malloc(capacity * 2), capacity);
  }

  isSpeech(frame: Int16Array): boolean {
    if (this.closed) throw new Error("the VAD was closed");
    if (frame.length > this.capacity) throw new Error(`a VAD frame holds at most ${this.capacity} samples`);
    // HEAP16 is replaced when the WebAssembly memory grows, so it is read afresh for every frame.
    this.module.HEAP16.set(frame, this.buffer >> 1);
    const result = this.module._fvad_process(this.handle, this.buffer, frame.length);
    if (result < 0) throw new Error(`WebRTC VAD refused a frame of ${frame.length} samples`);
    return result === 1;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.module._free(this.buffer);
    this.module._fvad_free(this.handle);
  }
}
