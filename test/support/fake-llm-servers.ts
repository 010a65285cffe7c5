/**
 * Fake model servers for tests and benchmarks: real HTTP on 127.0.0.1 at a random port, speaking the streaming
 * protocol OpenAI (`POST /v1/chat/completions`) or Anthropic (`POST /v1/messages`) documents, scripted per request.
 *
 *   const server = await startFakeOpenAi({ chunks: ["Hel", "lo"] });
 *   createLlmProvider({ ...agent, provider: "openai", base_url: server.url }, "sk-test", { timeoutMs: 2000 });
 *   server.setBehaviour([{ status: 500 }, { chunks: ["ok"] }]); // the next request fails, later ones succeed
 *   server.requests[0]?.json;                                   // what the adapter sent, parsed
 *   await server.close();
 *
 * In a suite, `const openai = fakeOpenAiForSuite();` starts one before its tests and closes it after: `openai().url`.
 *
 * A behaviour array is a script: request n gets entry n, and the last entry repeats. A function instead answers each
 * request by what it asks (`server.setBehaviour((request) => …)`).
 *
 * `toolCalls` makes the reply ask for those calls after its text (OpenAI `delta.tool_calls`, Anthropic `tool_use` blocks),
 * their arguments streamed in pieces, or each call in one event with `toolCallsWhole`. Usage is reported as each
 * vendor does (OpenAI only when the request asks for it with `stream_options.include_usage`).
 *
 * An Anthropic request that forces a tool (`tool_choice: {type: "tool", name}`, how structured output is asked for)
 * gets the chunks as that tool call's `input_json_delta` pieces.
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { after, before } from "node:test";

export interface FakeBehaviour {
  /** The reply text, one SSE event per chunk. Default: ["Hello", ", ", "world", "!"]. */
  chunks?: string[];
  /** Wait before the first text chunk; headers and the opening events (role delta, message_start) go out at once. */
  firstChunkDelayMs?: number;
  /** Wait between text chunks. */
  chunkDelayMs?: number;
  /** Awaited before text chunk `index` is written: holds the stream at a point the test chooses, for as long as it likes. */
  beforeChunk?: (index: number) => Promise<void>;
  /** Answer with this HTTP status and the vendor's error body instead of a stream. */
  status?: number;
  /** The message in an error body or error event. */
  errorMessage?: string;
  /** After the text chunks, send the vendor's error event (`overloaded_error` / `server_error`) instead of the end. */
  streamError?: boolean;
  /** Destroy the connection after this many text chunks. */
  cutAfterChunks?: number;
  /** End the response cleanly after the text chunks but without the end marker (`[DONE]` / `message_stop`). */
  omitEnd?: boolean;
  /** Never answer, not even with headers. */
  hang?: boolean;
  /** Line ending of the SSE stream. Default "\n". */
  lineEnding?: "\n" | "\r\n";
  /** Tool calls to ask for after the text; `arguments` is sent as written (a string) or as the object's JSON. */
  toolCalls?: FakeToolCall[];
  /** Send each tool call whole, in one event, rather than its arguments in pieces. */
  toolCallsWhole?: boolean;
  /** Tokens reported. Default: 10 in, 5 out. */
  usage?: { input: number; output: number };
  /** Write every event in two halves a few milliseconds apart (split at a byte, so UTF-8 characters may be cut). */
  splitWrites?: boolean;
}

export interface FakeToolCall {
  id?: string;
  name: string;
  arguments: string | Record<string, unknown>;
}

export interface CapturedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The raw request body. */
  body: string;
  /** The body parsed as JSON, or undefined when it was not JSON. */
  json: unknown;
  /** How many of the behaviour's chunks were written so far (fewer than all once the caller went away). */
  chunksSent: number;
}

export type FakeResponder = (request: CapturedRequest) => FakeBehaviour;

export interface FakeLlmServer {
  /** The base URL to configure: `http://127.0.0.1:<port>/v1` for OpenAI, `http://127.0.0.1:<port>` for Anthropic. */
  url: string;
  requests: CapturedRequest[];
  setBehaviour(behaviour: FakeBehaviour | FakeBehaviour[] | FakeResponder): void;
  close(): Promise<void>;
}

type Vendor = "openai" | "anthropic";

const DEFAULT_CHUNKS = ["Hello", ", ", "world", "!"];

function sleep(ms: number): Promise<void> {
  // Unreferenced, so a test process is not kept alive by a reply nobody waits for any more.
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

function errorBody(vendor: Vendor, status: number, message: string): unknown {
  if (vendor === "anthropic") {
    const type = status === 429 ? "rate_limit_error" : status === 529 ? "overloaded_error" : status >= 500 ? "api_error" : "invalid_request_error";
    return { type: "error", error: { type, message } };
  }
  const type = status === 429 ? "rate_limit_exceeded" : status >= 500 ? "server_error" : "invalid_request_error";
  return { error: { message, type, param: null, code: null } };
}

function openAiChunk(delta: Record<string, unknown>, finishReason: string | null): unknown {
  return {
    id: "chatcmpl-fake",
    object: "chat.completion.chunk",
    created: 1_700_000_000,
    model: "fake-model",
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  };
}

/** The events around the text, per vendor: what opens the stream, what carries one chunk, and what ends it. */
const protocols = {
  openai: {
    opening: (_inputTokens?: number): string[] => [`data: ${JSON.stringify(openAiChunk({ role: "assistant", content: "" }, null))}`, ": keep-alive"],
    text: (chunk: string): string => `data: ${JSON.stringify(openAiChunk({ content: chunk }, null))}`,
    error: (message: string): string => `data: ${JSON.stringify({ error: { message, type: "server_error", code: null } })}`,
  },
  anthropic: {
    opening: (inputTokens = 10): string[] => [
      sse("message_start", {
        type: "message_start",
        message: { id: "msg_fake", type: "message", role: "assistant", content: [], model: "fake-model", stop_reason: null, usage: { input_tokens: inputTokens, output_tokens: 1 } },
      }),
      sse("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } }),
      sse("ping", { type: "ping" }),
    ],
    text: (chunk: string): string => sse("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "text_delta", text: chunk } }),
    toolOpening: (name: string): string =>
      sse("content_block_start", { type: "content_block_start", index: 0, content_block: { type: "tool_use", id: "toolu_fake", name, input: {} } }),
    toolInput: (chunk: string): string =>
      sse("content_block_delta", { type: "content_block_delta", index: 0, delta: { type: "input_json_delta", partial_json: chunk } }),
    error: (message: string): string => sse("error", { type: "error", error: { type: "overloaded_error", message } }),
  },
};

function sse(event: string, data: unknown): string {
  return `event: ${event}\ndata: ${JSON.stringify(data)}`;
}

async function writeEvent(res: ServerResponse, event: string, behaviour: FakeBehaviour): Promise<void> {
  const lineEnding = behaviour.lineEnding ?? "\n";
  const bytes = Buffer.from(`${event.split("\n").join(lineEnding)}${lineEnding}${lineEnding}`);
  if (!behaviour.splitWrites) {
    res.write(bytes);
    return;
  }
  const middle = Math.floor(bytes.length / 2);
  res.write(bytes.subarray(0, middle));
  await sleep(2);
  if (!res.destroyed) res.write(bytes.subarray(middle));
}

/** Lets what was written reach the client first: destroying a socket drops writes still queued on it. */
async function cut(res: ServerResponse): Promise<void> {
  await new Promise<void>((resolve) => res.write("", () => resolve()));
  await sleep(20);
  res.destroy();
}

/** The tool an Anthropic request forces, if any. */
function forcedTool(json: unknown): string | undefined {
  if (typeof json !== "object" || json === null) return undefined;
  const choice = (json as { tool_choice?: { type?: unknown; name?: unknown } }).tool_choice;
  return choice?.type === "tool" && typeof choice.name === "string" ? choice.name : undefined;
}

/** The arguments' JSON in three pieces (as vendors cut them, anywhere, even inside a string), or whole. */
function argumentPieces(call: FakeToolCall, whole: boolean): string[] {
  const json = typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments);
  if (whole || json.length < 3) return [json];
  const third = Math.ceil(json.length / 3);
  return [json.slice(0, third), json.slice(third, 2 * third), json.slice(2 * third)];
}

function openAiToolCallEvents(calls: FakeToolCall[], whole: boolean): string[] {
  const id = (call: FakeToolCall, index: number) => call.id ?? `call_fake_${index}`;
  if (whole) {
    const toolCalls = calls.map((call, index) => ({ index, id: id(call, index), type: "function", function: { name: call.name, arguments: argumentPieces(call, true)[0] } }));
    return [`data: ${JSON.stringify(openAiChunk({ tool_calls: toolCalls }, null))}`];
  }
  return calls.flatMap((call, index) => [
    `data: ${JSON.stringify(openAiChunk({ tool_calls: [{ index, id: id(call, index), type: "function", function: { name: call.name, arguments: "" } }] }, null))}`,
    ...argumentPieces(call, false).map((piece) => `data: ${JSON.stringify(openAiChunk({ tool_calls: [{ index, function: { arguments: piece } }] }, null))}`),
  ]);
}

function anthropicToolCallEvents(calls: FakeToolCall[], whole: boolean): string[] {
  return calls.flatMap((call, position) => {
    const index = position + 1;
    return [
      sse("content_block_start", { type: "content_block_start", index, content_block: { type: "tool_use", id: call.id ?? `toolu_fake_${position}`, name: call.name, input: {} } }),
      ...argumentPieces(call, whole).map((piece) =>
        sse("content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: piece } }),
      ),
      sse("content_block_stop", { type: "content_block_stop", index }),
    ];
  });
}

function wantsUsage(json: unknown): boolean {
  const options = typeof json === "object" && json !== null ? (json as { stream_options?: { include_usage?: unknown } }).stream_options : undefined;
  return options?.include_usage === true;
}

/** The events that end a reply: with tool calls, those calls, and each vendor's usage report. */
function endingEvents(vendor: Vendor, behaviour: FakeBehaviour, json: unknown): string[] {
  const calls = behaviour.toolCalls ?? [];
  const usage = behaviour.usage ?? { input: 10, output: 5 };
  const whole = behaviour.toolCallsWhole ?? false;
  if (vendor === "openai") {
    const usageEvent = wantsUsage(json)
      ? [`data: ${JSON.stringify({ id: "chatcmpl-fake", object: "chat.completion.chunk", created: 1_700_000_000, model: "fake-model", choices: [], usage: { prompt_tokens: usage.input, completion_tokens: usage.output, total_tokens: usage.input + usage.output } })}`]
      : [];
    return [...openAiToolCallEvents(calls, whole), `data: ${JSON.stringify(openAiChunk({}, calls.length > 0 ? "tool_calls" : "stop"))}`, ...usageEvent, "data: [DONE]"];
  }
  return [
    sse("content_block_stop", { type: "content_block_stop", index: 0 }),
    ...anthropicToolCallEvents(calls, whole),
    sse("message_delta", { type: "message_delta", delta: { stop_reason: calls.length > 0 ? "tool_use" : "end_turn", stop_sequence: null }, usage: { output_tokens: usage.output } }),
    sse("message_stop", { type: "message_stop" }),
  ];
}

async function reply(vendor: Vendor, res: ServerResponse, behaviour: FakeBehaviour, captured: CapturedRequest): Promise<void> {
  const json = captured.json;
  if (behaviour.hang) return;
  if (behaviour.status !== undefined) {
    const body = errorBody(vendor, behaviour.status, behaviour.errorMessage ?? "fake upstream error");
    res.writeHead(behaviour.status, { "content-type": "application/json" }).end(JSON.stringify(body));
    return;
  }
  const tool = forcedTool(json);
  const protocol = protocols[vendor];
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
  const opening = vendor === "anthropic" && tool ? [...protocols.anthropic.opening(behaviour.usage?.input).slice(0, 1), protocols.anthropic.toolOpening(tool)] : protocol.opening(behaviour.usage?.input);
  for (const event of opening) await writeEvent(res, event, behaviour);
  const chunks = behaviour.chunks ?? (behaviour.toolCalls ? [] : DEFAULT_CHUNKS);
  for (const [index, chunk] of chunks.entries()) {
    const delay = index === 0 ? behaviour.firstChunkDelayMs : behaviour.chunkDelayMs;
    if (delay) await sleep(delay);
    await behaviour.beforeChunk?.(index);
    if (res.destroyed) return;
    if (behaviour.cutAfterChunks === index) return cut(res);
    await writeEvent(res, vendor === "anthropic" && tool ? protocols.anthropic.toolInput(chunk) : protocol.text(chunk), behaviour);
    captured.chunksSent += 1;
  }
  if (behaviour.cutAfterChunks !== undefined && behaviour.cutAfterChunks >= chunks.length) return cut(res);
  if (behaviour.streamError) await writeEvent(res, protocol.error(behaviour.errorMessage ?? "fake overload"), behaviour);
  else if (!behaviour.omitEnd) for (const event of endingEvents(vendor, behaviour, json)) await writeEvent(res, event, behaviour);
  res.end();
}

async function startFake(vendor: Vendor, initial: FakeBehaviour | FakeBehaviour[]): Promise<FakeLlmServer> {
  const path = vendor === "openai" ? "/v1/chat/completions" : "/v1/messages";
  let script: FakeBehaviour[] | FakeResponder = Array.isArray(initial) ? initial : [initial];
  let scriptStart = 0;
  const requests: CapturedRequest[] = [];

  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (part: Buffer) => parts.push(part));
    req.on("end", () => {
      const body = Buffer.concat(parts).toString("utf8");
      let json: unknown;
      try {
        json = JSON.parse(body);
      } catch {
        // Not JSON: `json` stays undefined and `body` shows exactly what was sent.
      }
      const captured: CapturedRequest = { method: req.method ?? "", path: req.url ?? "", headers: req.headers, body, json, chunksSent: 0 };
      requests.push(captured);
      if (req.method !== "POST" || req.url !== path) {
        res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify(errorBody(vendor, 404, `no route ${req.url ?? ""}`)));
        return;
      }
      const turn = requests.length - 1 - scriptStart;
      const behaviour = typeof script === "function" ? script(captured) : (script[Math.min(turn, script.length - 1)] ?? {});
      reply(vendor, res, behaviour, captured).catch(() => res.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: vendor === "openai" ? `http://127.0.0.1:${port}/v1` : `http://127.0.0.1:${port}`,
    requests,
    setBehaviour(behaviour) {
      script = Array.isArray(behaviour) || typeof behaviour === "function" ? behaviour : [behaviour];
      scriptStart = requests.length;
    },
    close() {
      server.closeAllConnections();
      return new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}

export function startFakeOpenAi(behaviour: FakeBehaviour | FakeBehaviour[] = {}): Promise<FakeLlmServer> {
  return startFake("openai", behaviour);
}

export function startFakeAnthropic(behaviour: FakeBehaviour | FakeBehaviour[] = {}): Promise<FakeLlmServer> {
  return startFake("anthropic", behaviour);
}

/** A fake OpenAI server for the enclosing suite: started before its tests, closed after them. */
export function fakeOpenAiForSuite(): () => FakeLlmServer {
  let server: FakeLlmServer | undefined;
  before(async () => {
    server = await startFakeOpenAi();
  });
  after(async () => {
    await server?.close();
  });
  return () => {
    if (!server) throw new Error("the suite's fake OpenAI server is not started yet");
    return server;
  };
}
