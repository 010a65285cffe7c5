import { encodeWav, PIPELINE_SAMPLE_RATE } from "../audio.js";
import { SpeechProviderError } from "../errors.js";
import { callOpenAi, type OpenAiEndpoint } from "./openai-http.js";
import type { SpeechToText } from "../stt.js";

/**
 * Any OpenAI-compatible `POST {base_url}/audio/transcriptions` (OpenAI, Groq, faster-whisper servers, LocalAI):
 * multipart form with `file` (the turn as a 16 kHz WAV), `model`, `language` (ISO-639-1, from the project's tag)
 * and `response_format=json`; the answer is `{"text": "..."}`.
 */
export class OpenAiStt implements SpeechToText {
  readonly name = "openai";

  constructor(
    private readonly endpoint: OpenAiEndpoint,
    private readonly language: string = "en-US",
  ) {}

  /** `phrases` go in OpenAI's `prompt`, which biases the transcription toward their spelling (224 tokens at most there). */
  async transcribe(samples: Int16Array, signal?: AbortSignal, phrases: readonly string[] = []): Promise<string> {
    const form = new FormData();
    const wav = encodeWav({ sampleRate: PIPELINE_SAMPLE_RATE, samples });
    form.append("file", new Blob([new Uint8Array(wav)], { type: "audio/wav" }), "turn.wav");
    form.append("model", this.endpoint.model);
    form.append("language", this.language.split("-")[0]?.toLowerCase() ?? "en");
    form.append("response_format", "json");
    if (phrases.length > 0) form.append("prompt", phrases.join(", ").slice(0, 800));
    const response = await callOpenAi(this.endpoint, "/audio/transcriptions", { body: form }, signal);
    const body: unknown = await response.json().catch(() => undefined);
    const text = typeof body === "object" && body !== null ? (body as { text?: unknown }).text : undefined;
    if (typeof text !== "string") throw new SpeechProviderError("speech provider's transcription has no text", response.status, false);
    return text.trim();
  }
}
