import assert from "node:assert/strict";
import { test } from "node:test";
import { forEachDatabase } from "../support/harness.js";

forEachDatabase("path ids of every length", (h) => {
  const tooLong = (loc: string[], input: string) => ({
    detail: [{ type: "string_too_long", loc, msg: "String should have at most 200 characters", input, ctx: { max_length: 200 } }],
  });

  test("an id of up to 200 characters that names nothing is 404 from the resource, whatever its length", async () => {
    const { apiKey } = await h().organization();
    for (const length of [1, 100, 101, 150, 200]) {
      const id = "a".repeat(length);
      const thread = await h().request({ method: "GET", url: `/threads/${id}`, headers: { authorization: apiKey } });
      assert.deepEqual([thread.status, thread.json()], [404, { detail: "Thread not found" }], `thread id of ${length}`);
      const call = await h().request({ method: "GET", url: `/calls/${id}`, headers: { authorization: apiKey } });
      assert.deepEqual([call.status, call.json()], [404, { detail: "Call not found" }], `call id of ${length}`);
    }
  });

  test("an id over 200 characters is a 422 at its path parameter, whatever its length", async () => {
    const { apiKey } = await h().organization();
    for (const length of [201, 1000, 3000]) {
      const id = "a".repeat(length);
      const thread = await h().request({ method: "GET", url: `/threads/${id}/messages`, headers: { authorization: apiKey } });
      assert.deepEqual([thread.status, thread.json()], [422, tooLong(["path", "thread_id"], id)], `thread id of ${length}`);
      const call = await h().request({ method: "GET", url: `/calls/${id}`, headers: { authorization: apiKey } });
      assert.deepEqual([call.status, call.json()], [422, tooLong(["path", "call_id"], id)], `call id of ${length}`);
    }
  });

  test("an unknown route stays 404 Not Found however long its segments", async () => {
    const response = await h().request({ method: "GET", url: `/nothing/${"a".repeat(3000)}` });
    assert.deepEqual([response.status, response.json()], [404, { detail: "Not Found" }]);
  });

  test("a path id holding NUL is 400 with the NUL detail on every route, whether or not the route asks the database", async () => {
    const { apiKey } = await h().organization();
    const nul = { detail: "Text must not contain NUL (U+0000) characters" };
    const requests: { method: "GET" | "POST" | "DELETE"; url: string }[] = [
      { method: "GET", url: "/threads/%00" },
      { method: "GET", url: "/threads/a%00b" },
      { method: "GET", url: "/threads/a%00b/messages" },
      { method: "GET", url: "/threads/a%00b/messages/search?query=x" },
      { method: "POST", url: "/threads/a%00b/token" },
      { method: "GET", url: "/calls/a%00b" },
      { method: "GET", url: "/simulations/a%00b" },
      { method: "GET", url: "/simulations/%00" },
    ];
    for (const request of requests) {
      const response = await h().request({ ...request, headers: { authorization: apiKey } });
      assert.deepEqual([response.status, response.json()], [400, nul], `${request.method} ${request.url}`);
    }
  });
});
