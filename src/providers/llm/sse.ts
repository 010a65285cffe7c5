/** One server-sent event: its `event:` name ("message" when the server sent none) and its `data:` lines joined by "\n". */
export interface SseEvent {
  event: string;
  data: string;
}

const LF = "\n";
const CR = "\r";
const LF_CODE = 10;
const COLON_CODE = 58;
const SPACE_CODE = 32;

/**
 * Parses a `text/event-stream` body chunk by chunk, synchronously, by the WHATWG rules that matter for model servers:
 * LF, CRLF or lone CR line endings, comment lines (`: keep-alive`), multi-line data, and events, lines or UTF-8
 * characters split across chunks. A last event that the server did not close with a blank line is still delivered by
 * `end()`, because some servers (older llama.cpp builds) close the connection right after `data: [DONE]`.
 */
export class SseParser {
  private readonly decoder = new TextDecoder();
  /** Text of a line whose end has not arrived yet. */
  private pending = "";
  private eventName = "";
  /** The event's data lines so far; undefined until its first `data:` field. */
  private data: string | undefined;
  /** The last chunk ended in a CR, so an LF opening the next one completes that CRLF rather than an empty line. */
  private afterCr = false;

  /** The events the chunk completes. */
  push(chunk: Uint8Array): SseEvent[] {
    const events: SseEvent[] = [];
    this.takeLines(this.decoder.decode(chunk, { stream: true }), events);
    return events;
  }

  /** The events still held once the body has ended. */
  end(): SseEvent[] {
    const events: SseEvent[] = [];
    this.takeLines(this.decoder.decode(), events);
    if (this.pending !== "") this.takeLine(this.pending, events);
    this.pending = "";
    this.takeLine("", events);
    return events;
  }

  private takeLines(text: string, events: SseEvent[]): void {
    let buffer = this.pending === "" ? text : this.pending + text;
    if (this.afterCr && buffer.charCodeAt(0) === LF_CODE) buffer = buffer.slice(1);
    if (buffer !== "") this.afterCr = false;
    let start = 0;
    // Each position is searched again only once passed, which keeps a chunk holding many events linear.
    let lf = buffer.indexOf(LF);
    let cr = buffer.indexOf(CR);
    for (;;) {
      if (lf !== -1 && lf < start) lf = buffer.indexOf(LF, start);
      if (cr !== -1 && cr < start) cr = buffer.indexOf(CR, start);
      const end = lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr);
      if (end === -1) break;
      this.takeLine(buffer.slice(start, end), events);
      start = end + 1;
      if (end === cr) {
        if (buffer.charCodeAt(start) === LF_CODE) start++;
        // The LF of this CRLF may still be in flight.
        else if (start === buffer.length) this.afterCr = true;
      }
    }
    this.pending = start === 0 ? buffer : buffer.slice(start);
  }

  private takeLine(line: string, events: SseEvent[]): void {
    if (line === "") {
      if (this.data !== undefined) events.push({ event: this.eventName || "message", data: this.data });
      this.eventName = "";
      this.data = undefined;
      return;
    }
    if (line.charCodeAt(0) === COLON_CODE) return;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? "" : line.slice(line.charCodeAt(colon + 1) === SPACE_CODE ? colon + 2 : colon + 1);
    if (field === "data") this.data = this.data === undefined ? value : `${this.data}\n${value}`;
    else if (field === "event") this.eventName = value;
  }
}
