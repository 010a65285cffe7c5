import assert from "node:assert/strict";
import { before, test } from "node:test";
import { adminKey, forEachDatabase } from "../support/harness.js";
import { assertDocumented, buildWorld, endpoint, endpoints, nameOf, unchanged, validRequest, type World } from "./support.js";

const bodyEndpoints = () => endpoints.filter((candidate) => candidate.body !== undefined);
const parseError = { detail: "There was an error parsing the body" };
const nested = (depth: number, open = "[", close = "]") => `${open.repeat(depth)}${close.repeat(depth)}`;
const nestedObject = (depth: number) => `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;

interface Issue {
  type: string;
  loc: (string | number)[];
  ctx?: Record<string, unknown>;
}

forEachDatabase("limits on request size, length and shape", (h) => {
  // `fortress` only takes requests that must fail; `world` also takes the few that succeed.
  let world: World;
  let fortress: World;
  before(async () => {
    world = await buildWorld(h());
    fortress = await buildWorld(h());
  });

  const issuesOf = (body: string) => (JSON.parse(body) as { detail: Issue[] }).detail;

  test("a body over BODY_LIMIT_BYTES is 413 with a detail on every endpoint that takes one, and nothing is stored", async () => {
    assert.equal(h().config.bodyLimitBytes, 1_048_576);
    await unchanged(h(), fortress.organizationId, async () => {
      for (const target of bodyEndpoints()) {
        const request = validRequest(target, fortress);
        const payload = JSON.stringify({ ...target.body!(fortress), padding: "x".repeat(h().config.bodyLimitBytes) });
        const response = await h().request({ ...request, headers: { ...request.headers, "content-type": "application/json" }, payload });
        assert.equal(response.status, 413, nameOf(target));
        assert.deepEqual(response.json(), { detail: "Request Entity Too Large" });
      }
    });
  });

  test("a chat message may have 32,000 characters, counted as code points, and not one more", async () => {
    for (const route of ["/chat", "/legacy/chat"]) {
      const target = endpoint("POST", route);
      const request = validRequest(target, world);
      const send = (message: string) => h().request({ ...request, payload: { ...target.body!(world), message } });
      const longest = await send("😀".repeat(32_000));
      assert.equal(longest.status, 200, `${route}: ${longest.body.slice(0, 200)}`);
      const tooLong = await send("x".repeat(32_001));
      assert.equal(tooLong.status, 422, route);
      assert.deepEqual(
        issuesOf(tooLong.body).map(({ type, loc, ctx }) => ({ type, loc, ctx })),
        [{ type: "string_too_long", loc: ["body", "message"], ctx: { max_length: 32_000 } }],
      );
    }
  });

  test("cursors, search texts, names and ids in the query have maximum lengths, refused with 422 at their location", async () => {
    const cases: [string, (string | number)[], number][] = [
      [`/threads/${fortress.threadId}/messages?cursor=${"a".repeat(513)}`, ["query", "cursor"], 512],
      [`/threads/${fortress.threadId}/messages/search?query=hours&cursor=${"a".repeat(513)}`, ["query", "cursor"], 512],
      [`/threads/${fortress.threadId}/messages/search?query=${"q".repeat(501)}`, ["query", "query"], 500],
      [`/calls?cursor=${"a".repeat(513)}`, ["query", "cursor"], 512],
      [`/calls?thread_id=${"t".repeat(201)}`, ["query", "thread_id"], 200],
      [`/calls?project_name=${"p".repeat(201)}`, ["query", "project_name"], 200],
    ];
    await unchanged(h(), fortress.organizationId, async () => {
      for (const [url, loc, max] of cases) {
        const response = await h().request({ method: "GET", url, headers: { authorization: fortress.apiKey } });
        assert.equal(response.status, 422, url.slice(0, 80));
        assert.deepEqual(issuesOf(response.body).map(({ type, loc: at, ctx }) => ({ type, loc: at, ctx })), [{ type: "string_too_long", loc, ctx: { max_length: max } }]);
      }
      const longest = await h().request({ method: "GET", url: `/threads/${fortress.threadId}/messages/search?query=${"q".repeat(500)}`, headers: { authorization: fortress.apiKey } });
      assert.equal(longest.status, 200, longest.body);
    });
  });

  test("a query value repeated a thousand times is handled like one (the real bound is Node's 16 KiB request head)", async () => {
    const headers = { authorization: fortress.apiKey };
    const once = await h().request({ method: "GET", url: "/calls?status=scheduled", headers });
    for (const name of ["status", "call_type", "direction", "limit", "cursor", "thread_id"]) {
      const value = { status: "scheduled", call_type: "phone_call", direction: "outbound", limit: "5", cursor: fortress.callCursor, thread_id: fortress.threadId }[name]!;
      const started = Date.now();
      const response = await h().request({ method: "GET", url: `/calls?${`${name}=${value}&`.repeat(1000)}`, headers });
      assert.equal(response.status, 200, `${name}: ${response.body.slice(0, 200)}`);
      assert.ok(Date.now() - started < 2000, `${name} x1000 took ${Date.now() - started} ms`);
    }
    const repeated = await h().request({ method: "GET", url: `/calls?${"status=scheduled&".repeat(1000)}`, headers });
    assert.deepEqual(repeated.json(), once.json());
  });

  test("JSON nested more than 1,000 levels is 400 'There was an error parsing the body' (CPython's RecursionError); 1,000 levels is a 422", async () => {
    await unchanged(h(), fortress.organizationId, async () => {
      for (const target of bodyEndpoints()) {
        const request = validRequest(target, fortress);
        const headers = { ...request.headers, "content-type": "application/json" };
        const firstField = JSON.stringify(Object.keys(target.body!(fortress))[0]);
        for (const payload of [`{${firstField}:${nested(1000)}}`, nested(100_000), nestedObject(100_000)]) {
          const response = await h().request({ ...request, headers, payload });
          assert.equal(response.status, 400, `${nameOf(target)}: ${response.status}`);
          assert.deepEqual(response.json(), parseError);
        }
        const deepest = await h().request({ ...request, headers, payload: `{${firstField}:${nested(999)}}` });
        assert.equal(deepest.status, 422, `${nameOf(target)}: ${deepest.status}`);
        assertDocumented(target, deepest, nameOf(target));
      }
    });
  });

  test("stored JSON may nest 64 levels and no more, so deep json_input or schemas cannot crash the embedded database", async () => {
    const headers = { authorization: world.apiKey };
    const jsonInput = (depth: number) => `{"a":${nested(depth - 1)}}`;
    const ok = await h().request({ method: "POST", url: `/threads/${world.threadId}/json-input`, headers, payload: { project_name: "support", json_input: jsonInput(64) } });
    assert.equal(ok.status, 200, ok.body);
    await unchanged(h(), fortress.organizationId, async () => {
      // 900 levels: within the body parser's 1,000, about where PGlite's own stack gives out.
      for (const depth of [65, 900]) {
        const requests = [
          { method: "POST" as const, url: `/threads/${fortress.threadId}/json-input`, payload: { project_name: "support", json_input: jsonInput(depth) } },
          { method: "POST" as const, url: "/threads", payload: { json_input: jsonInput(depth) } },
        ];
        for (const request of requests) {
          const response = await h().request({ ...request, headers: { authorization: fortress.apiKey } });
          assert.equal(response.status, 422, `${request.url} depth ${depth}: ${response.body.slice(0, 200)}`);
          assert.deepEqual(issuesOf(response.body).map(({ type, loc }) => ({ type, loc })), [{ type: "value_error", loc: ["body", "json_input"] }]);
        }
        // Sent as text: JSON.stringify itself overflows the stack on such nesting.
        const config = await h().request({
          method: "PUT",
          url: `/admin/projects/${fortress.spareProjectId}/config`,
          headers: { authorization: `Bearer ${adminKey}`, "content-type": "application/json" },
          payload: `{"config":{"json_input":{"schema":{"type":"object","default":${nested(depth)}}}}}`,
        });
        assert.equal(config.status, 422, `schema depth ${depth}: ${config.body.slice(0, 200)}`);
      }
    });
    assert.deepEqual((await h().request({ method: "GET", url: "/readyz" })).json(), { status: "ok" });
    assert.equal((await h().request({ method: "GET", url: `/threads/${fortress.threadId}`, headers: { authorization: fortress.apiKey } })).status, 200);
  });

  test("a body that is not valid UTF-8 is 400 'There was an error parsing the body' on every endpoint that takes one", async () => {
    const invalid = [[0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xf4, 0x90, 0x80, 0x80]];
    await unchanged(h(), fortress.organizationId, async () => {
      for (const target of bodyEndpoints()) {
        const request = validRequest(target, fortress);
        for (const bytes of invalid) {
          const payload = Buffer.concat([Buffer.from('{"thread_id":"'), Buffer.from(bytes), Buffer.from('"}')]);
          const response = await h().request({ ...request, headers: { ...request.headers, "content-type": "application/json" }, payload });
          assert.equal(response.status, 400, `${nameOf(target)} ${Buffer.from(bytes).toString("hex")}`);
          assert.deepEqual(response.json(), parseError);
        }
      }
    });
  });

  test("NUL characters, which PostgreSQL cannot store, are 400 with a detail wherever they are sent", async () => {
    const headers = { authorization: fortress.apiKey };
    const nul = { detail: "Text must not contain NUL (U+0000) characters" };
    await unchanged(h(), fortress.organizationId, async () => {
      const requests = [
        { method: "GET" as const, url: "/threads/a%00b" },
        { method: "GET" as const, url: `/threads/${fortress.threadId}/messages/search?query=%00` },
        { method: "GET" as const, url: "/calls?thread_id=%00" },
        { method: "POST" as const, url: "/chat", payload: { thread_id: fortress.threadId, message: "a\u0000b", service_config_name: "support" } },
        { method: "POST" as const, url: "/threads", payload: { alias: "a\u0000b" } },
        { method: "POST" as const, url: `/threads/${fortress.threadId}/json-input`, payload: { project_name: "support", json_input: '{"a":"\\u0000"}' } },
        { method: "POST" as const, url: "/legacy/end_conversation", payload: { thread_id: "\u0000" } },
      ];
      for (const request of requests) {
        const response = await h().request({ ...request, headers });
        assert.equal(response.status, 400, `${request.url}: ${response.body}`);
        assert.deepEqual(response.json(), nul);
      }
    });
  });

  test("a path with malformed percent-encoding is 400 with a detail, not Fastify's own error body", async () => {
    for (const url of ["/threads/%E0%A4%A", "/threads/%ED%A0%80", "/calls/%zz", "/legacy/generate-token/%"]) {
      const response = await h().request({ method: "GET", url, headers: { authorization: fortress.apiKey } });
      assert.equal(response.status, 400, url);
      assert.deepEqual(response.json(), { detail: "Bad Request" }, url);
    }
  });

  test("a plain HTTP request to a WebSocket route is 404 Not Found in the documented shape, before any credential check", async () => {
    for (const url of [`/threads/${fortress.threadId}/events`, `/threads/${fortress.threadId}/events?token=junk`, `/calls/${fortress.callId}/ws?token=junk`]) {
      for (const headers of [{ authorization: fortress.apiKey }, {}]) {
        const response = await h().request({ method: "GET", url, headers });
        assert.equal(response.status, 404, url);
        assert.equal(response.body, '{"detail":"Not Found"}', url);
      }
    }
  });
});
