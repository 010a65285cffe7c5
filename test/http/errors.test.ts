import assert from "node:assert/strict";
import { test } from "node:test";
import { forEachDatabase } from "../support/harness.js";

forEachDatabase("routing and FastAPI error shapes", (h) => {
  test("an unknown route is 404 Not Found and a wrong method is 405 with Allow", async () => {
    const unknown = await h().request({ method: "GET", url: "/nowhere" });
    assert.equal(unknown.status, 404);
    assert.equal(unknown.body, '{"detail":"Not Found"}');
    const wrong = await h().request({ method: "DELETE", url: "/threads" });
    assert.equal(wrong.status, 405);
    assert.deepEqual(wrong.json(), { detail: "Method Not Allowed" });
    assert.equal(wrong.headers.allow, "GET, POST");
    const head = await h().request({ method: "HEAD", url: "/healthz" });
    assert.equal(head.status, 405);
  });

  test("a trailing slash redirects to the route without it", async () => {
    const response = await h().request({ method: "GET", url: "/healthz/?x=1" });
    assert.equal(response.status, 307);
    assert.equal(response.headers.location, "/healthz?x=1");
  });

  test("invalid JSON is json_invalid with Python's position and message", async () => {
    const { apiKey } = await h().organization();
    const response = await h().request({
      method: "POST",
      url: "/threads",
      headers: { authorization: apiKey, "content-type": "application/json" },
      payload: "{some broken json}",
    });
    assert.equal(response.status, 422);
    assert.equal(
      response.body,
      '{"detail":[{"type":"json_invalid","loc":["body",1],"msg":"JSON decode error","input":{},"ctx":{"error":"Expecting property name enclosed in double quotes"}}]}',
    );
  });

  test("a body of another content type is validated as raw text, and an absent body is missing", async () => {
    const { apiKey } = await h().organization();
    const threadId = await h().thread(apiKey);
    const text = await h().request({
      method: "POST",
      url: `/threads/${threadId}/json-input`,
      headers: { authorization: apiKey, "content-type": "text/plain" },
      payload: "hello",
    });
    assert.deepEqual(text.json(), {
      detail: [{ type: "model_attributes_type", loc: ["body"], msg: "Input should be a valid dictionary or object to extract fields from", input: "hello" }],
    });
    const absent = await h().request({ method: "POST", url: `/threads/${threadId}/json-input`, headers: { authorization: apiKey } });
    assert.deepEqual(absent.json(), { detail: [{ type: "missing", loc: ["body"], msg: "Field required", input: null }] });
  });

  test("errors of several request parts come together, header first", async () => {
    const response = await h().request({ method: "POST", url: "/chat", payload: { message: 5 } });
    assert.equal(response.status, 422);
    const detail = response.json<{ detail: { type: string; loc: unknown[] }[] }>().detail;
    assert.deepEqual(
      detail.map((issue) => [issue.type, issue.loc]),
      [
        ["missing", ["header", "authorization"]],
        ["missing", ["body", "thread_id"]],
        ["string_type", ["body", "message"]],
        ["missing", ["body", "service_config_name"]],
      ],
    );
  });

  test("a body over the size limit is refused with 413 and nothing is stored", async () => {
    const { apiKey } = await h().organization();
    const response = await h().request({
      method: "POST",
      url: "/threads",
      headers: { authorization: apiKey, "content-type": "application/json" },
      payload: JSON.stringify({ json_input: "x".repeat(2_000_000) }),
    });
    assert.equal(response.status, 413);
  });

  test("health, readiness, metrics and the OpenAPI document are served", async () => {
    assert.deepEqual((await h().request({ method: "GET", url: "/healthz" })).json(), { status: "ok" });
    assert.deepEqual((await h().request({ method: "GET", url: "/readyz" })).json(), { status: "ok" });
    const metrics = await h().request({ method: "GET", url: "/metrics" });
    assert.match(metrics.body, /parley_http_requests_total\{method="GET",route="\/healthz",status="200"\} \d+/);
    // The latency histogram: cumulative buckets up to +Inf, which equals the count.
    const healthz = (suffix: string) => Number(new RegExp(`parley_http_request_duration_seconds_${suffix}\\} (\\S+)`).exec(metrics.body)?.[1]);
    assert.ok(healthz('bucket\\{le="0.005",method="GET",route="/healthz"') <= healthz('bucket\\{le="30",method="GET",route="/healthz"'));
    assert.ok(healthz('count\\{method="GET",route="/healthz"') >= 1);
    assert.equal(healthz('bucket\\{le="\\+Inf",method="GET",route="/healthz"'), healthz('count\\{method="GET",route="/healthz"'));
    assert.ok(healthz('sum\\{method="GET",route="/healthz"') > 0);
    const openapi = (await h().request({ method: "GET", url: "/openapi.json" })).json<{ openapi: string; info: { version: string }; paths: Record<string, unknown> }>();
    assert.equal(openapi.openapi, "3.1.0");
    assert.equal(openapi.info.version, "1.0.0");
    for (const path of ["/threads", "/threads/{thread_id}", "/chat", "/threads/{thread_id}/messages", "/threads/{thread_id}/messages/search"]) {
      assert.ok(openapi.paths[path], path);
    }
    const docs = await h().request({ method: "GET", url: "/docs" });
    assert.ok(docs.status === 200 || docs.status === 302, String(docs.status));
  });
});
