/** One server-sent event: its `event:` name ("message" when the server sent none) and its `data:` lines joined by "\n". */
export interface SseEvent {
  event: string;
  data: string;
}

/** The bytes of a fetch response body; read with a reader because the DOM typings do not declare it async-iterable. */
export async function* bodyChunks(body: ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    reader.cancel().catch(() => undefined);
  }
}

/**
 * Parses a `text/event-stream` body by the WHATWG rules that matter for model servers: LF, CRLF or lone CR line
 * endings, comment lines (`: keep-alive`), multi-line data, and events, lines or UTF-8 characters split across reads.
 * A last event that the server did not close with a blank line is still delivered, because some servers (older
 * llama.cpp builds) close the connection right after `data: [DONE]`.
 */
export async function* parseSse(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = "";
  let eventName = "";
  let data: string[] = [];

  function take(line: string): SseEvent | undefined {
    if (line === "") {
      const event = data.length > 0 ? { event: eventName || "message", data: data.join("\n") } : undefined;
      eventName = "";
      data = [];
      return event;
    }
    if (line.startsWith(":")) return undefined;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    const rawValue = colon === -1 ? "" : line.slice(colon + 1);
    const value = rawValue.startsWith(" ") ? rawValue.slice(1) : rawValue;
    if (field === "data") data.push(value);
    else if (field === "event") eventName = value;
    return undefined;
  }

  function* completeLines(final: boolean): Generator<string> {
    let start = 0;
    for (let i = 0; i < buffer.length; i++) {
      const char = buffer[i];
      if (char !== "\n" && char !== "\r") continue;
      // A CR at the end of what has arrived may be the first half of a CRLF still in flight.
      if (char === "\r" && i === buffer.length - 1 && !final) break;
      yield buffer.slice(start, i);
      if (char === "\r" && buffer[i + 1] === "\n") i++;
      start = i + 1;
    }
    buffer = buffer.slice(start);
  }

  for await (const chunk of chunks) {
    buffer += decoder.decode(chunk, { stream: true });
    for (const line of completeLines(false)) {
      const event = take(line);
      if (event) yield event;
    }
  }
  buffer += decoder.decode();
  for (const line of completeLines(true)) {
    const event = take(line);
    if (event) yield event;
  }
  if (buffer !== "") take(buffer);
  const last = take("");
  if (last) yield last;
}
