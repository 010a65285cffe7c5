import assert from "node:assert/strict";
import { test } from "node:test";
import { forEachDatabase } from "../support/harness.js";

interface SocketDoc {
  query: Record<string, unknown>;
  clientFrames: { properties: { type: { const: string } } }[];
  serverFrames: { properties: { type: { const: string } } }[];
  closeCodes: Record<string, string>;
}

forEachDatabase("the OpenAPI document", (h) => {
  test("describes the WebSockets and the stream formats, for client authors", async () => {
    const document = (await h().request({ method: "GET", url: "/openapi.json" })).json<{
      info: { description: string };
      "x-websockets": Record<string, SocketDoc>;
      "x-streams": Record<string, Record<string, unknown>>;
    }>();
    const sockets = document["x-websockets"];
    assert.deepEqual(Object.keys(sockets).sort(), ["/calls/{call_id}/ws", "/threads/{thread_id}/events"]);
    const types = (frames: SocketDoc["serverFrames"]) => frames.map((frame) => frame.properties.type.const).sort();
    assert.deepEqual(types(sockets["/threads/{thread_id}/events"]!.serverFrames), ["call.updated", "message.created", "pong", "web_call.ready"]);
    assert.deepEqual(types(sockets["/calls/{call_id}/ws"]!.clientFrames), ["end", "hangup", "text", "user_message"]);
    assert.ok("1008" in sockets["/calls/{call_id}/ws"]!.closeCodes);
    assert.deepEqual(Object.keys(document["x-streams"]["POST /chat"]!).sort(), ["application/x-ndjson", "text/event-stream"]);
    assert.match(document.info.description, /## WebSockets/);
    assert.match(document.info.description, /application\/x-ndjson/);
  });
});
