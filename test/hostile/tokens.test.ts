import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { before, test } from "node:test";
import type { InjectOptions } from "fastify";
import { forEachDatabase, testSecrets } from "../support/harness.js";
import { assertDocumented, buildWorld, endpoint, endpoints, nameOf, send, takesCredential, unchanged, unsampledRoutes, validRequest, type Endpoint, type World } from "./support.js";

// Extends test/http/threads.test.ts (GET /threads/{id} only) to every endpoint, and to more kinds of forgery.

const tokenEndpoints = () => endpoints.filter((endpoint) => endpoint.access === "thread");
const organizationEndpoints = () => endpoints.filter((endpoint) => endpoint.access === "apiKey");
const adminEndpoints = () => endpoints.filter((endpoint) => endpoint.access === "admin");
const events = () => endpoint("GET", "/threads/:thread_id/events");

/** A request to the endpoint about `threadId` with `authorization`; cursors are left out, being bound to a thread. */
function aimedAt(endpoint: Endpoint, world: World, threadId: string, authorization: string): InjectOptions {
  const request = validRequest(endpoint, { ...world, threadId });
  const url = new URL(String(request.url), "http://parley.test");
  url.searchParams.delete("cursor");
  return { ...request, url: url.pathname + url.search, headers: { authorization } };
}

const now = () => Math.floor(Date.now() / 1000);
const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");

/** A JWT signed by hand, so that any header or claim can be forged; HMAC with the service's secret unless told. */
function sign(payload: Record<string, unknown>, options: { alg?: "HS256" | "HS384" | "HS512"; secret?: string; header?: Record<string, unknown> } = {}): string {
  const alg = options.alg ?? "HS256";
  const input = `${encode({ alg, typ: "JWT", ...options.header })}.${encode(payload)}`;
  const mac = createHmac(`sha${alg.slice(2)}`, options.secret ?? testSecrets.JWT_SECRET).update(input).digest("base64url");
  return `${input}.${mac}`;
}

/** Tokens the service must refuse, each named; all but the last two carry a valid HMAC of the service's secret. */
function forgeries(world: World): [string, string][] {
  const claims = { sub: world.threadId, org: world.organizationId, scope: "thread", iat: now(), exp: now() + 600, jti: "forged" };
  const without = (name: keyof typeof claims) => Object.fromEntries(Object.entries(claims).filter(([key]) => key !== name));
  const [header, payload, signature] = world.token.split(".") as [string, string, string];
  const genuine = JSON.parse(Buffer.from(payload, "base64url").toString()) as Record<string, unknown>;
  return [
    ["alg none", `${encode({ alg: "none", typ: "JWT" })}.${payload}.`],
    ["alg none with the genuine signature", `${encode({ alg: "none", typ: "JWT" })}.${payload}.${signature}`],
    ["HS512", sign(claims, { alg: "HS512" })],
    ["HS384", sign(claims, { alg: "HS384" })],
    ["RS256 header over an HMAC signature", `${encode({ alg: "RS256", typ: "JWT" })}.${payload}.${signature}`],
    ["tampered payload", `${header}.${encode({ ...genuine, sub: world.otherThreadId })}.${signature}`],
    ["tampered scope", `${header}.${encode({ ...genuine, scope: "organization" })}.${signature}`],
    ["expired", sign({ ...claims, iat: now() - 7200, exp: now() - 3600 })],
    ["not valid yet", sign({ ...claims, nbf: now() + 3600 })],
    ["without sub", sign(without("sub"))],
    ["without exp", sign(without("exp"))],
    ["without iat", sign(without("iat"))],
    ["without jti", sign(without("jti"))],
    ["without org", sign(without("org"))],
    ["without scope", sign(without("scope"))],
    ["scope organization", sign({ ...claims, scope: "organization" })],
    ["scope admin", sign({ ...claims, scope: "admin" })],
    ["sub not a string", sign({ ...claims, sub: 42 })],
    ["org not a string", sign({ ...claims, org: [world.organizationId] })],
    ["exp not a number", sign({ ...claims, exp: "tomorrow" })],
    ["unknown critical header", sign(claims, { header: { crit: ["x-parley"], "x-parley": 1 } })],
    ["wrong secret", sign(claims, { secret: "another-secret-another-secret-0123" })],
    ["empty signature", `${header}.${payload}.`],
  ];
}

forEachDatabase("thread tokens on every endpoint", (h) => {
  let world: World;
  before(async () => {
    world = await buildWorld(h());
  });

  test("every route the server registers is in the hostile catalogue, so no route escapes these suites", () => {
    assert.deepEqual(unsampledRoutes, []);
    assert.ok(endpoints.length >= 30, `only ${endpoints.length} routes catalogued`);
  });

  test("the endpoints taking a thread token are exactly those decisions.md lists", () => {
    assert.deepEqual(tokenEndpoints().map(nameOf).sort(), [
      "GET /threads/:thread_id",
      "GET /threads/:thread_id/events",
      "GET /threads/:thread_id/messages",
      "GET /threads/:thread_id/messages/search",
      "POST /chat",
      "POST /legacy/chat",
      "POST /legacy/get_followup",
      "POST /legacy/retrieve_conversations",
      "POST /voice/:thread_id/web-call",
    ]);
  });

  test("every endpoint without a Parley credential declares what guards it instead, and only the service's own files and probes are open to anyone", () => {
    const guards = (access: Endpoint["access"]) => endpoints.filter((endpoint) => endpoint.access === access).map(nameOf).sort();
    assert.deepEqual(guards("public"), ["GET /healthz", "GET /metrics", "GET /openapi.json", "GET /readyz", "GET /widget.js"]);
    assert.deepEqual(guards("signedUrl"), ["GET /recordings/:file"]);
    assert.deepEqual(guards("joinToken"), ["GET /calls/:call_id/ws"]);
    assert.deepEqual(guards("vendorSignature"), ["POST /voice/retell/webhook", "POST /voice/twilio/inbound", "POST /voice/twilio/status", "POST /voice/twilio/status/:call_id"]);
    assert.deepEqual(guards("vendorStream"), ["GET /voice/retell/llm/:retell_call_id", "GET /voice/twilio/media/:call_id"]);
  });

  test("a thread token is 403 on every organization-level endpoint and 401 on the admin interface, changing nothing", async () => {
    await unchanged(h(), world.organizationId, async () => {
      for (const endpoint of organizationEndpoints()) {
        const response = await send(h(), endpoint, aimedAt(endpoint, world, world.threadId, world.token));
        assert.equal(response.status, 403, `${nameOf(endpoint)}: ${response.body}`);
        assert.deepEqual(response.json(), { detail: "A thread token cannot be used for this endpoint" });
      }
      for (const endpoint of adminEndpoints()) {
        const response = await send(h(), endpoint, aimedAt(endpoint, world, world.threadId, `Bearer ${world.token}`));
        assert.equal(response.status, 401, `${nameOf(endpoint)}: ${response.body}`);
        assertDocumented(endpoint, response, nameOf(endpoint));
      }
    });
  });

  test("a thread token is 403 on another thread of its organization and on another organization's thread, changing nothing", async () => {
    const stranger = await buildWorld(h());
    await unchanged(h(), world.organizationId, async () => {
      for (const endpoint of tokenEndpoints()) {
        for (const [threadId, token] of [
          [world.otherThreadId, world.token],
          [world.threadId, stranger.token],
        ] as const) {
          const response = await send(h(), endpoint, aimedAt(endpoint, world, threadId, token));
          assert.equal(response.status, 403, `${nameOf(endpoint)} on ${threadId}: ${response.body}`);
          assert.deepEqual(response.json(), { detail: "This token is not valid for this thread" }, nameOf(endpoint));
        }
      }
    });
  });

  test("forged, expired, unsigned and mis-scoped tokens are 401 with WWW-Authenticate on every endpoint that takes a credential", async () => {
    const forged = forgeries(world);
    const guarded = endpoints.filter(takesCredential);
    await unchanged(h(), world.organizationId, async () => {
      for (const endpoint of guarded) {
        for (const [name, token] of forged) {
          const response = await send(h(), endpoint, aimedAt(endpoint, world, world.threadId, token));
          assert.equal(response.status, 401, `${nameOf(endpoint)} with a token ${name}: ${response.status} ${response.body}`);
          assert.equal(response.headers["www-authenticate"], "Bearer", `${nameOf(endpoint)} ${name}`);
          assertDocumented(endpoint, response, `${nameOf(endpoint)} ${name}`);
        }
      }
    });
  });

  test("the events socket refuses a forged token given as the token query parameter with 401", async () => {
    for (const [name, token] of forgeries(world)) {
      const response = await send(h(), events(), { method: "GET", url: `/threads/${world.threadId}/events?token=${encodeURIComponent(token)}` });
      assert.equal(response.status, 401, `${name}: ${response.body}`);
      assertDocumented(events(), response, name);
    }
  });

  // Last: the web call it starts changes the thread in the background.
  test("a thread token opens its own thread on every endpoint that takes one, raw or as Bearer", async () => {
    for (const [index, endpoint] of tokenEndpoints().entries()) {
      const authorization = index % 2 === 0 ? world.token : `bearer  ${world.token}`;
      const response = await send(h(), endpoint, aimedAt(endpoint, world, world.threadId, authorization));
      const accepted = endpoint.socket ? response.status === 101 : response.status >= 200 && response.status < 300;
      assert.ok(accepted, `${nameOf(endpoint)}: ${response.status} ${response.body}`);
    }
  });
});
