import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { SseParser, type SseEvent } from "../../../src/providers/llm/sse.js";

/** Feeds the parts to one parser as separate chunks and returns every event it produced, `end()` included. */
function events(...parts: (string | Uint8Array)[]): SseEvent[] {
  const parser = new SseParser();
  const parsed: SseEvent[] = [];
  for (const part of parts) parsed.push(...parser.push(typeof part === "string" ? new TextEncoder().encode(part) : part));
  parsed.push(...parser.end());
  return parsed;
}

describe("SseParser", () => {
  const stream = ': keep-alive\r\nevent: delta\r\ndata: {"text":"héllo 👋"}\r\n\r\ndata: line one\ndata: line two\n\ndata: [DONE]\n\n';
  const expected: SseEvent[] = [
    { event: "delta", data: '{"text":"héllo 👋"}' },
    { event: "message", data: "line one\nline two" },
    { event: "message", data: "[DONE]" },
  ];

  it("reads events, names, comments and multi-line data", () => {
    assert.deepEqual(events(stream), expected);
  });

  it("gives the same events wherever the bytes are split, inside a CRLF or a UTF-8 character included", () => {
    const bytes = new TextEncoder().encode(stream);
    for (let at = 1; at < bytes.length; at++) {
      assert.deepEqual(events(bytes.subarray(0, at), bytes.subarray(at)), expected, `split at byte ${at}`);
    }
  });

  it("gives the same events when every byte arrives on its own", () => {
    const bytes = new TextEncoder().encode(stream);
    assert.deepEqual(events(...[...bytes].map((byte) => Uint8Array.of(byte))), expected);
  });

  it("hands over each event with the chunk that completes it, not later", () => {
    const parser = new SseParser();
    assert.deepEqual(parser.push(new TextEncoder().encode("data: one\n")), []);
    assert.deepEqual(parser.push(new TextEncoder().encode("\ndata: two\r\n\r")), [{ event: "message", data: "one" }, { event: "message", data: "two" }]);
    assert.deepEqual(parser.push(new TextEncoder().encode("\ndata: three\n")), []);
    assert.deepEqual(parser.end(), [{ event: "message", data: "three" }]);
  });

  it("ends a line at a CR right away and treats an LF opening the next chunk as the rest of that CRLF", () => {
    const parser = new SseParser();
    assert.deepEqual(parser.push(new TextEncoder().encode("data: one\r")), []);
    assert.deepEqual(parser.push(new TextEncoder().encode("\r")), [{ event: "message", data: "one" }]);
    assert.deepEqual(parser.push(new TextEncoder().encode("data: two\r")), []);
    assert.deepEqual(parser.push(new TextEncoder().encode("\n")), []);
    assert.deepEqual(parser.push(new TextEncoder().encode("\r\n")), [{ event: "message", data: "two" }]);
  });

  it("reads many events arriving in one chunk", () => {
    const many = Array.from({ length: 1_000 }, (_, index) => `data: ${index}\r\n\r\n`).join("");
    assert.deepEqual(
      events(many).map((event) => event.data),
      Array.from({ length: 1_000 }, (_, index) => String(index)),
    );
  });

  it("accepts lone CR line endings and a data field without a space", () => {
    assert.deepEqual(events("data:one\r\rdata: two\r\r"), [
      { event: "message", data: "one" },
      { event: "message", data: "two" },
    ]);
  });

  it("delivers a last event the server closed without a blank line, also when its line ends in a lone CR", () => {
    assert.deepEqual(events("data: first\n\ndata: [DONE]"), [
      { event: "message", data: "first" },
      { event: "message", data: "[DONE]" },
    ]);
    assert.deepEqual(events("data: [DONE]\r"), [{ event: "message", data: "[DONE]" }]);
  });

  it("does not carry an event name over to the next event", () => {
    assert.deepEqual(events("event: ping\ndata: {}\n\ndata: plain\n\n"), [
      { event: "ping", data: "{}" },
      { event: "message", data: "plain" },
    ]);
  });

  it("keeps an empty data line as an event with empty data", () => {
    assert.deepEqual(events("data:\n\ndata\n\n"), [
      { event: "message", data: "" },
      { event: "message", data: "" },
    ]);
  });

  it("skips blocks that hold only comments or other fields", () => {
    assert.deepEqual(events(": comment\n\nid: 7\nretry: 100\n\n"), []);
  });
});
