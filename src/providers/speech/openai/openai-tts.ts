import { decodeWav } from "../audio.js";
import { SpeechProviderError } from "../errors.js";
import { callOpenAi, type OpenAiEndpoint } from "./openai-http.js";
import type { SpokenText, TextToSpeech } from "../tts.js";

/**
 * Any OpenAI-compatible `POST {base_url}/audio/speech`: JSON `{model, input, voice, response_format: "wav"}`, the
 * answer the audio itself. WAV rather than `pcm` because every compatible server offers it and it states its own
 * sample rate (OpenAI's is 24 kHz; its streamed WAV leaves the data size unset, which decodeWav accepts).
 */
export class OpenAiTts implements TextToSpeech {
  readonly name = "openai";

  constructor(
    private readonly endpoint: OpenAiEndpoint,
    private readonly voice: string,
  ) {}

  async synthesize(text: string, signal?: AbortSignal): Promise<SpokenText> {
    const body = JSON.stringify({ model: this.endpoint.model, input: text, voice: this.voice, response_format: "wav" });
    const response = await callOpenAi(this.endpoint, "/audio/speech", { body, json: true }, signal);
    const bytes = new Uint8Array(await response.arrayBuffer());
    try {
      return decodeWav(bytes);
    } catch (error) {
      throw new SpeechProviderError(`speech provider's audio is not a 16-bit mono WAV: ${error instanceof Error ? error.message : String(error)}`, response.status, false);
    }
  }
}
