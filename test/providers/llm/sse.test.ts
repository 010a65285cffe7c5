import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parseSse, type SseEvent } from "../../../src/providers/llm/sse.js";

async function* from(...parts: (string | Uint8Array)[]): AsyncGenerator<Uint8Array> {
  for (const part of parts) yield typeof part === "string" ? new TextEncoder().encode(part) : part;
}

async function events(chunks: AsyncIterable<Uint8Array>): Promise<SseEvent[]> {
  const parsed: SseEvent[] = [];
  for await (const event of parseSse(chunks)) parsed.push(event);
  return parsed;
}

describe("parseSse", () => {
  const stream = ': keep-alive\r\nevent: delta\r\ndata: {"text":"héllo 👋"}\r\n\r\ndata: line one\ndata: line two\n\ndata: [DONE]\n\n';
  const expected: SseEvent[] = [
    { event: "delta", data: '{"text":"héllo 👋"}' },
    { event: "message", data: "line one\nline two" },
    { event: "message", data: "[DONE]" },
  ];

  it("reads events, names, comments and multi-line data", async () => {
    assert.deepEqual(await events(from(stream)), expected);
  });

  it("gives the same events wherever the bytes are split, inside a CRLF or a UTF-8 character included", async () => {
    const bytes = new TextEncoder().encode(stream);
    for (let at = 1; at < bytes.length; at++) {
      assert.deepEqual(await events(from(bytes.subarray(0, at), bytes.subarray(at))), expected, `split at byte ${at}`);
    }
  });

  it("gives the same events when every byte arrives on its own", async () => {
    const bytes = new TextEncoder().encode(stream);
    const single = [...bytes].map((byte) => Uint8Array.of(byte));
    assert.deepEqual(await events(from(...single)), expected);
  });

  it("accepts lone CR line endings and a data field without a space", async () => {
    assert.deepEqual(await events(from("data:one\r\rdata: two\r\r")), [
      { event: "message", data: "one" },
      { event: "message", data: "two" },
    ]);
  });

  it("delivers a last event the server closed without a blank line", async () => {
    assert.deepEqual(await events(from("data: first\n\ndata: [DONE]")), [
      { event: "message", data: "first" },
      { event: "message", data: "[DONE]" },
    ]);
  });

  it("does not carry an event name over to the next event", async () => {
    assert.deepEqual(await events(from("event: ping\ndata: {}\n\ndata: plain\n\n")), [
      { event: "ping", data: "{}" },
      { event: "message", data: "plain" },
    ]);
  });

  it("skips blocks that hold only comments or other fields", async () => {
    assert.deepEqual(await events(from(": comment\n\nid: 7\nretry: 100\n\n")), []);
  });
});
