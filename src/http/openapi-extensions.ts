/**
 * What OpenAPI 3.1 cannot state as operations: the two WebSockets and the frames of the streamed chat responses.
 * They go in the document twice: as `x-websockets` and `x-streams` (machine-readable, for client generators and
 * checks) and as Markdown in `info.description`, which `/docs` shows at the top of the page.
 */

const frame = (type: string, properties: Record<string, unknown>, required: string[] = []) => ({
  type: "object",
  properties: { type: { const: type }, ...properties },
  required: ["type", ...required],
});

const websockets = {
  "/threads/{thread_id}/events": {
    summary: "A thread's events, live and replayed",
    credentials: "Authorization header (API key or the thread's token), or for browsers `?token=`",
    query: {
      token: { type: "string", maxLength: 4096 },
      after: { type: "integer", minimum: 0, maximum: Number.MAX_SAFE_INTEGER, description: "Replay the events with a larger seq first" },
    },
    refused: "Before the upgrade, with the HTTP status and body of any request: 401/403/404/422",
    serverFrames: [
      frame("message.created", { seq: { type: "integer" }, message: { type: "object" }, call_id: { type: "string" } }, ["seq", "message"]),
      frame("call.updated", { seq: { type: "integer" }, call: { type: "object" } }, ["seq", "call"]),
      frame("web_call.ready", { seq: { type: "integer" }, call_id: { type: "string" }, access_token: { type: "string" } }, ["seq", "call_id", "access_token"]),
      frame("pong", {}),
    ],
    clientFrames: [frame("ping", {})],
    closeCodes: {
      1008: "more than 20 frames in 10 s, or a frame over 1 KiB",
      1011: "reading the thread's events failed: reconnect with ?after= the last seq",
    },
  },
  "/calls/{call_id}/ws": {
    summary: "A web call's conversation",
    credentials: "`?token=` the access_token of web_call.ready (once, within the join window)",
    query: { token: { type: "string", maxLength: 4096 }, audio: { type: "boolean", default: false } },
    refused: "Before the upgrade: 403 for a wrong or expired token, 404 for an unknown call, 422 for bad parameters",
    audio: "Binary frames both ways: 16-bit little-endian mono PCM at 16 kHz (the caller's microphone in, the agent's speech out in 20 ms frames)",
    clientFrames: [
      frame("text", { text: { type: "string", minLength: 1, maxLength: 32000 } }, ["text"]),
      frame("user_message", { text: { type: "string", minLength: 1, maxLength: 32000 } }, ["text"]),
      frame("hangup", {}),
      frame("end", {}),
    ],
    serverFrames: [
      frame("call.started", { call_id: { type: "string" } }, ["call_id"]),
      frame("transcript", { role: { enum: ["user", "agent"] }, text: { type: "string" }, final: { type: "boolean" } }, ["role", "text", "final"]),
      frame("agent_speaking", {}),
      frame("clear", {}),
      frame("agent_delta", { turn: { type: "integer" }, text: { type: "string" } }, ["turn", "text"]),
      frame("agent_message", { turn: { type: "integer" }, text: { type: "string" } }, ["turn", "text"]),
      frame("agent_audio", { turn: { type: "integer" }, format: { const: "wav" }, data: { type: "string", contentEncoding: "base64" } }, ["turn", "format", "data"]),
      frame("error", { detail: { type: "string" } }, ["detail"]),
      frame("call.ended", { reason: { type: "string" } }, ["reason"]),
      frame("end", { reason: { type: "string" } }, ["reason"]),
    ],
    closeCodes: {
      1000: "the call ended",
      1008: "a frame over 64 KiB, more than 40 text frames or 600 audio frames in 10 s",
      1011: "an internal error",
      4409: "the call can no longer be joined",
    },
  },
};

const streams = {
  "POST /chat": {
    "application/x-ndjson": {
      lines: [
        { type: "object", properties: { token: { type: "string" }, index: { type: "integer" } }, required: ["token", "index"] },
        { description: "last line: the complete response, as without streaming ({message, extras})" },
        { type: "object", properties: { error: { type: "string" }, status_code: { type: "integer" } }, description: "last line instead, on a failure mid-stream" },
      ],
    },
    "text/event-stream": { events: { token: "{token, index}", message: "{message, extras}", error: "{error, status_code}" } },
  },
  "POST /legacy/chat, POST /legacy/get_followup": {
    "application/x-ndjson": { lines: ["{token, index} per token", "{message} last"] },
  },
};

const description = `Self-hostable conversational-AI service.

## Streams
\`POST /chat\` with \`streaming: true\` answers \`application/x-ndjson\`: one \`{"token","index"}\` object per line
(index 0, 1, 2, …), then a last line with the complete response \`{"message","extras"}\`; a failure mid-stream ends
it with \`{"error","status_code"}\`. With \`Accept: text/event-stream\` the same as server-sent events \`token\`,
\`message\` and \`error\`. Legacy streams send \`{"token","index"}\` lines, then \`{"message"}\`.

## WebSockets
Refusals happen before the upgrade, with the usual HTTP status and body. Machine-readable frames: \`x-websockets\`.

- \`GET /threads/{thread_id}/events\` (credential in \`Authorization\` or \`?token=\`; \`?after=SEQ\` replays,
  0 to 2^53 − 1): JSON events with \`type\` and a per-thread \`seq\`: \`message.created\`, \`call.updated\`,
  \`web_call.ready\` (\`call_id\`, \`access_token\`). Send \`{"type":"ping"}\` for \`{"type":"pong"}\`. Closes 1008 on
  more than 20 frames in 10 s or a frame over 1 KiB, 1011 when reading events fails (reconnect with \`?after=\`).
- \`GET /calls/{call_id}/ws?token=…[&audio=true]\`: with real audio (the default \`SPEECH_MODE=audio\`), binary frames
  of 16-bit mono PCM at 16 kHz both ways; send \`{"type":"text","text"}\` (or \`user_message\`) or
  \`{"type":"hangup"}\`; receive \`transcript\`, \`agent_speaking\`, \`clear\` (barge-in), \`error\` (the call goes on),
  \`call.ended\` and \`end\`. With \`SPEECH_MODE=text\`: \`call.started\`, \`agent_delta\`, \`agent_message\`,
  \`agent_audio\` (base64 WAV). Closes 1000 when the call ends, 1008 on a frame over 64 KiB, more than 40 text or
  600 audio frames in 10 s.
`;

export const openapiExtensions = { description, "x-websockets": websockets, "x-streams": streams };
