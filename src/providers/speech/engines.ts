import { withDefaults, type FliteVoice, type SpeechConfig } from "../../domain/projects/project-config.js";
import { EspeakPool, EspeakTts } from "./espeak/espeak-tts.js";
import { FliteTts } from "./flite/flite-tts.js";
import { SpeechUnavailableError } from "./errors.js";
import { OpenAiStt } from "./openai/openai-stt.js";
import { OpenAiTts } from "./openai/openai-tts.js";
import { checkPocketsphinx, PocketsphinxStt } from "./pocketsphinx/pocketsphinx-stt.js";
import type { SpeechToText } from "./stt.js";
import type { TextToSpeech } from "./tts.js";
import { WebRtcVad } from "./webrtc/webrtc-vad.js";
import type { SpeechKeys } from "../../domain/calls/ports.js";

const defaultSpeech = withDefaults({}).speech;

export interface EngineStatus {
  engine: string;
  ok: boolean;
  detail?: string;
}

/**
 * The speech engines of one instance. Offline engines are shared by every call (a pocketsphinx decoder pool per
 * language, one eSpeak NG worker pool); vendor engines are cheap objects made per call from the project's
 * settings. Nothing starts until it is first needed, so a server without pocketsphinx runs, reports it in
 * `/readyz`, and ends only the calls that need it.
 */
export class SpeechEngines {
  private readonly recognizers = new Map<string, PocketsphinxStt>();
  private readonly espeak: EspeakPool;
  /** The engines `status` found running. */
  private readonly found = new Set<string>();

  constructor(private readonly options: { sttWorkers: number; ttsWorkers: number }) {
    this.espeak = new EspeakPool(options.ttsWorkers);
  }

  stt(config: SpeechConfig["stt"], keys: SpeechKeys): SpeechToText {
    if (config.provider === "openai") {
      return new OpenAiStt({ baseUrl: config.base_url, model: config.model, ...(keys.sttApiKey ? { apiKey: keys.sttApiKey } : {}) }, config.language);
    }
    let recognizer = this.recognizers.get(config.language);
    if (!recognizer) {
      recognizer = new PocketsphinxStt(config.language, this.options.sttWorkers);
      this.recognizers.set(config.language, recognizer);
    }
    return recognizer;
  }

  tts(config: SpeechConfig["tts"], keys: SpeechKeys, options: { pitch?: number; wordsPerMinute?: number } = {}): TextToSpeech {
    if (config.provider === "openai") {
      return new OpenAiTts({ baseUrl: config.base_url, model: config.model, ...(keys.ttsApiKey ? { apiKey: keys.ttsApiKey } : {}) }, config.voice);
    }
    if (config.provider === "flite") return new FliteTts(config.voice as FliteVoice);
    return new EspeakTts(this.espeak, config.voice, options);
  }

  /**
   * Throws SpeechUnavailableError when an offline engine these settings need is not installed here. The VAD, which
   * every call needs, is checked by creating the call's own (SpeechCalls).
   */
  async check(config: SpeechConfig): Promise<void> {
    if (config.stt.provider === "pocketsphinx") await checkPocketsphinx(config.stt.language);
    if (config.tts.provider === "espeak") await this.espeak.check();
    if (config.tts.provider === "flite") await new FliteTts(config.tts.voice as FliteVoice).check();
  }

  /**
   * What `/readyz` reports: each offline engine of the default settings, and whether it runs here. An engine found
   * running is not checked again (an orchestrator asks every few seconds), and a check leaves no engine running.
   */
  async status(): Promise<EngineStatus[]> {
    const probe = async (engine: string, check: () => Promise<unknown>): Promise<EngineStatus> => {
      if (this.found.has(engine)) return { engine, ok: true };
      try {
        await check();
        this.found.add(engine);
        return { engine, ok: true };
      } catch (error) {
        return { engine, ok: false, detail: error instanceof SpeechUnavailableError ? error.message : `${engine} failed: ${String(error)}` };
      }
    };
    return Promise.all([
      probe("vad:webrtc", () => WebRtcVad.create().then((vad) => vad.close())),
      probe("stt:pocketsphinx", () => checkPocketsphinx("en-US")),
      probe("tts:flite", () => new FliteTts(defaultSpeech.tts.voice as FliteVoice).check()),
      probe("tts:espeak", () => this.espeak.probe()),
    ]);
  }

  /** Loads the recognizer's model in the background, so that a call's first turn does not wait for it. */
  async warm(config: SpeechConfig): Promise<void> {
    if (config.stt.provider === "pocketsphinx") {
      const recognizer = this.stt(config.stt, {});
      if (recognizer instanceof PocketsphinxStt) await recognizer.warm();
    }
  }

  async close(): Promise<void> {
    for (const recognizer of this.recognizers.values()) recognizer.close();
    this.recognizers.clear();
    await this.espeak.close();
  }
}
