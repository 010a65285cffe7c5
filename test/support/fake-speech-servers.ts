import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { resample } from "../../src/providers/speech/audio.js";
import { PocketsphinxStt } from "../../src/providers/speech/pocketsphinx/pocketsphinx-stt.js";
import { decodeWav, encodeWav } from "../../src/providers/speech/audio.js";
import { espeakCli } from "./speech-audio.js";

export interface FakeSpeechServer {
  /** `http://127.0.0.1:PORT/v1`, what a project's `base_url` is set to. */
  baseUrl: string;
  apiKey: string;
  requests: { path: string; model: string; fields: Record<string, string> }[];
  /** The next requests answer with this status and OpenAI's error body. */
  failNext(status: number, count?: number): void;
  close(): Promise<void>;
}

async function bodyOf(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function openAiError(message: string, type = "invalid_request_error"): string {
  return JSON.stringify({ error: { message, type, param: null, code: null } });
}

/**
 * A loopback server speaking OpenAI's audio API as its reference documents it: `POST /v1/audio/transcriptions`
 * (multipart: `file`, `model`, optional `language`, `response_format` json | text | verbose_json) answers
 * `{"text"}`, and `POST /v1/audio/speech` (JSON: `model`, `input`, `voice`, `response_format`) answers the audio.
 * Both really do the work, with engines other than the ones under test where possible: transcription with a
 * pocketsphinx decoder of its own, speech with Debian's espeak-ng command line, resampled to OpenAI's 24 kHz.
 */
export async function startFakeOpenAiSpeech(): Promise<FakeSpeechServer> {
  const apiKey = "sk-test-speech-0123456789";
  const recognizer = new PocketsphinxStt("en-US", 1);
  const requests: FakeSpeechServer["requests"] = [];
  let failures: { status: number; count: number } | undefined;
  const server: Server = createServer((request, response) => {
    void (async () => {
      const send = (status: number, body: string | Buffer, type = "application/json") => {
        response.writeHead(status, { "content-type": type });
        response.end(body);
      };
      const raw = await bodyOf(request);
      if (request.headers.authorization !== `Bearer ${apiKey}`) return send(401, openAiError("Incorrect API key provided", "invalid_api_key"));
      if (failures && failures.count > 0) {
        failures.count -= 1;
        return send(failures.status, openAiError("The server is overloaded", "server_error"));
      }
      if (request.method === "POST" && request.url === "/v1/audio/transcriptions") {
        const form = await new Request("http://fake/", { method: "POST", headers: { "content-type": request.headers["content-type"] ?? "" }, body: new Uint8Array(raw) }).formData();
        const file = form.get("file");
        const model = form.get("model");
        if (!(file instanceof Blob) || typeof model !== "string") return send(400, openAiError("file and model are required"));
        const fields = Object.fromEntries([...form.entries()].filter(([, value]) => typeof value === "string")) as Record<string, string>;
        requests.push({ path: "/audio/transcriptions", model, fields });
        let audio;
        try {
          audio = decodeWav(new Uint8Array(await file.arrayBuffer()));
        } catch {
          return send(400, openAiError("Invalid file format."));
        }
        const text = await recognizer.transcribe(resample(audio.samples, audio.sampleRate, 16_000));
        const format = fields["response_format"] ?? "json";
        if (format === "text") return send(200, `${text}\n`, "text/plain");
        return send(200, JSON.stringify(format === "verbose_json" ? { task: "transcribe", language: "english", duration: audio.samples.length / audio.sampleRate, text } : { text }));
      }
      if (request.method === "POST" && request.url === "/v1/audio/speech") {
        let body: { model?: unknown; input?: unknown; voice?: unknown; response_format?: unknown };
        try {
          body = JSON.parse(raw.toString()) as typeof body;
        } catch {
          return send(400, openAiError("We could not parse the JSON body of your request."));
        }
        if (typeof body.model !== "string" || typeof body.input !== "string" || typeof body.voice !== "string") return send(400, openAiError("model, input and voice are required"));
        const format = body.response_format ?? "mp3";
        if (format !== "wav" && format !== "pcm") return send(400, openAiError(`this fake speaks wav and pcm, not ${String(format)}`));
        requests.push({ path: "/audio/speech", model: body.model, fields: { voice: body.voice, input: body.input } });
        const speech = await espeakCli(body.input, { sampleRate: 24_000 });
        const pcm = Buffer.from(speech.samples.buffer, speech.samples.byteOffset, speech.samples.byteLength);
        return format === "pcm" ? send(200, pcm, "audio/pcm") : send(200, encodeWav(speech), "audio/wav");
      }
      send(404, openAiError(`Unknown request URL: ${request.method} ${request.url}`));
    })().catch((error: unknown) => {
      response.writeHead(500, { "content-type": "application/json" });
      response.end(openAiError(String(error), "server_error"));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    apiKey,
    requests,
    failNext(status, count = 1) {
      failures = { status, count };
    },
    async close() {
      recognizer.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
