import assert from "node:assert/strict";
import fc from "fast-check";
import type { FastifyInstance, InjectOptions } from "fastify";
import WebSocket from "ws";
import { acmeAgent } from "../support/fixtures.js";
import { registeredRoutes, type RouteEntry } from "../../src/http/server.js";
import { adminKey, type Harness, type TestResponse } from "../support/harness.js";

/**
 * Shared ground for the hostile-input suites: every route the server registers with a valid request for each, a
 * small seeded organization ("world") to aim requests at, the documented error shapes, and a checksum of everything
 * an organization has stored.
 */

export const accountId = "5a0c3d9e-8b7f-4e21-9c3a-6d4b2f1e0a11";

export const hostileConfig = {
  agent: acmeAgent,
  voice: { accounts: [{ id: accountId, phone_numbers: ["+14155550100"] }], simulated: { script: ["Hello?", "Bye."], ring_ms: 20, turn_ms: 20 } },
};

export interface World {
  organizationId: string;
  apiKey: string;
  projectId: string;
  /** A thread with a few messages and a scheduled phone call. */
  threadId: string;
  /** A second thread of the same organization, also with a scheduled phone call. */
  otherThreadId: string;
  /** A thread token for `threadId`. */
  token: string;
  historyCursor: string;
  searchCursor: string;
  callId: string;
  callCursor: string;
  threadListCursor: string;
  /** An API key and a project that admin requests may revoke or reconfigure without harm to the rest. */
  spareKeyId: string;
  spareProjectId: string;
  /** The spare project's first configuration version. */
  spareVersionId: string;
  /** A stored simulation run (POST /chat with `simulate.create`). */
  simulationId: string;
  /** The alias of `otherThreadId`. */
  alias: string;
}

function ok(response: TestResponse, what: string): TestResponse {
  assert.ok(response.status >= 200 && response.status < 300, `${what}: ${response.status} ${response.body}`);
  return response;
}

async function scheduleCall(h: Harness, apiKey: string, projectId: string, threadId: string): Promise<string> {
  const payload = { callee: "+14155552671", project_id: projectId, scheduled_for: new Date(Date.now() + 86_400_000).toISOString() };
  const response = await h.request({ method: "POST", url: `/voice/${threadId}/phone-call`, headers: { authorization: apiKey }, payload });
  return ok(response, "scheduling a call").json<{ id: string }>().id;
}

/**
 * A new organization with messages, cursors, two scheduled calls, a thread token, a spare key and a spare project;
 * also fills `endpoints` from the server's routes.
 */
export async function buildWorld(h: Harness): Promise<World> {
  catalogue(h.server);
  const { organizationId, apiKey, projectId } = await h.organization(hostileConfig);
  const threadId = await h.thread(apiKey);
  const alias = `caller-${organizationId}`;
  const otherThreadId = await h.thread(apiKey, { alias });
  for (const message of ["What are your opening hours?", "Where is the office located?", "And your hours on Friday?"]) {
    const payload = { thread_id: threadId, message, service_config_name: "support" };
    ok(await h.request({ method: "POST", url: "/chat", headers: { authorization: apiKey }, payload }), "chatting");
  }
  const simulation = ok(
    await h.request({
      method: "POST",
      url: "/chat",
      headers: { authorization: apiKey },
      payload: { thread_id: threadId, message: "What are your opening hours?", service_config_name: "support", simulate: { max_turns: 1, create: true } },
    }),
    "simulating",
  );
  const get = (url: string) => h.request({ method: "GET", url, headers: { authorization: apiKey } });
  const history = ok(await get(`/threads/${threadId}/messages?limit=2`), "history").json<{ pagination: { cursor: string } }>();
  const search = ok(await get(`/threads/${threadId}/messages/search?query=hours&limit=1`), "search").json<{ pagination: { cursor: string } }>();
  const callId = await scheduleCall(h, apiKey, projectId, threadId);
  await scheduleCall(h, apiKey, projectId, otherThreadId);
  const calls = ok(await get("/calls?limit=1"), "listing calls").json<{ pagination: { cursor: string } }>();
  const threadList = ok(await get("/threads?limit=1"), "listing threads").json<{ pagination: { cursor: string } }>();
  const token = ok(await h.request({ method: "POST", url: `/threads/${threadId}/token`, headers: { authorization: apiKey } }), "token");
  const spareKey = ok(await h.admin("POST", `/admin/organizations/${organizationId}/api-keys`), "spare key");
  const spareProject = ok(await h.admin("POST", `/admin/organizations/${organizationId}/projects`, { name: "spare", config: {} }), "spare project");
  assert.ok(history.pagination.cursor && search.pagination.cursor && calls.pagination.cursor && threadList.pagination.cursor, "the world needs every kind of cursor");
  return {
    organizationId,
    apiKey,
    projectId,
    threadId,
    otherThreadId,
    token: token.json<{ access_token: string }>().access_token,
    historyCursor: history.pagination.cursor,
    searchCursor: search.pagination.cursor,
    callId,
    callCursor: calls.pagination.cursor,
    threadListCursor: threadList.pagination.cursor,
    spareKeyId: spareKey.json<{ id: string }>().id,
    spareProjectId: spareProject.json<{ id: string }>().id,
    spareVersionId: spareProject.json<{ config_version_id: string }>().config_version_id,
    simulationId: simulation.json<{ extras: { simulation: { id: string } } }>().extras.simulation.id,
    alias,
  };
}

/** Who may call an endpoint, as the server's route catalogue reports it; `thread` also takes the thread's own token. */
export type Access = RouteEntry["access"];

/** A valid request for a route. */
interface Sample {
  /** Valid values of the path parameters. */
  ids?: (world: World) => Record<string, string>;
  /** A valid query, as ordered pairs so that a name may repeat. */
  query?: (world: World) => [string, string][];
  /** A valid JSON body. */
  body?: (world: World) => Record<string, unknown>;
  /** Body fields that take null as a value (it clears them). */
  nullableBody?: readonly string[];
  /** The legacy summary answers its own failures as `{error, status_code}`. */
  summaryShape?: boolean;
  /** A WebSocket route: plain HTTP is 404 there, so requests go as real upgrades (see `send`). */
  socket?: boolean;
  /**
   * A telephony vendor's socket: it takes any upgrade and authenticates the vendor by the call it names and its first
   * frames, closing with a 44xx code when that fails (test/providers/voice checks those refusals).
   */
  inBand?: boolean;
}

export interface Endpoint extends Sample {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** Fastify-style route, `:name` for each path parameter. */
  route: string;
  access: Access;
}

const thread = (world: World) => ({ thread_id: world.threadId });
const inADay = () => new Date(Date.now() + 86_400_000).toISOString();

/** A valid request for every route, by `METHOD route`. */
const samples: Record<string, Sample> = {
  "POST /threads": { body: () => ({ type: "NORMAL", timezone: "Europe/Amsterdam", project_name: "support", json_input: '{"plan":"gold"}' }) },
  "GET /threads": { query: (w) => [["project_name", "support"], ["type", "NORMAL"], ["cursor", w.threadListCursor], ["limit", "5"]] },
  "GET /threads/:thread_id": { ids: thread },
  "GET /threads/by-alias/:alias": { ids: (w) => ({ alias: w.alias }) },
  // Sets the alias the thread already has: valid, and leaves the world as it was.
  "PATCH /threads/:thread_id": { ids: (w) => ({ thread_id: w.otherThreadId }), body: (w) => ({ alias: w.alias }), nullableBody: ["alias"] },
  "POST /threads/:thread_id/token": { ids: thread },
  "POST /threads/:thread_id/json-input": { ids: thread, body: () => ({ project_name: "support", json_input: '{"plan":"gold"}' }) },
  "POST /chat": {
    body: (w) => ({ thread_id: w.threadId, message: "What are your opening hours?", service_config_name: "support", streaming: false, start_new_conversation: false, user_type: "user" }),
  },
  "GET /simulations/:simulation_id": { ids: (w) => ({ simulation_id: w.simulationId }) },
  "GET /threads/:thread_id/messages": { ids: thread, query: (w) => [["cursor", w.historyCursor], ["newer", "false"], ["limit", "5"]] },
  "GET /threads/:thread_id/messages/search": { ids: thread, query: (w) => [["query", "hours"], ["cursor", w.searchCursor], ["limit", "2"], ["context", "1"]] },
  "GET /threads/:thread_id/events": { ids: thread, query: () => [["after", "0"]], socket: true },
  "GET /calls": {
    query: (w) => [
      ["status", "scheduled"],
      ["status", "queued"],
      ["call_type", "phone_call"],
      ["direction", "outbound"],
      ["from_date", "2020-01-01"],
      ["to_date", "2100-01-01T00:00:00Z"],
      ["thread_id", w.threadId],
      ["project_name", "support"],
      ["cursor", w.callCursor],
      ["limit", "5"],
    ],
  },
  "GET /calls/:call_id": { ids: (w) => ({ call_id: w.callId }) },
  "GET /calls/:call_id/ws": { ids: (w) => ({ call_id: w.callId }), query: () => [["token", "not-a-join-token"], ["audio", "false"]], socket: true },
  "POST /voice/:thread_id/phone-call": {
    ids: thread,
    body: (w) => ({ callee: "+14155552671", project_id: w.projectId, scheduled_for: inADay(), voice_provider_account_id: accountId }),
  },
  "DELETE /voice/:thread_id/phone-call": { ids: thread },
  "POST /voice/simulated/inbound": { body: (w) => ({ project_id: w.projectId, from: "+14155552671" }) },
  "POST /voice/:thread_id/web-call": { ids: thread, body: (w) => ({ project_id: w.projectId, voice_provider_account_id: accountId }) },
  // Vendors' callbacks carry no Parley credential: each is refused (401/403) unless signed with the project's vendor key.
  "POST /voice/retell/webhook": {},
  "POST /voice/twilio/status/:call_id": { ids: (w) => ({ call_id: w.callId }) },
  "POST /voice/twilio/status": {},
  "POST /voice/twilio/inbound": {},
  "GET /voice/retell/llm/:retell_call_id": { ids: () => ({ retell_call_id: "call_0123456789abcdef0123456789" }), socket: true, inBand: true },
  "GET /voice/twilio/media/:call_id": { ids: (w) => ({ call_id: w.callId }), socket: true, inBand: true },
  "GET /recordings/:file": { ids: (w) => ({ file: `${w.callId}.wav` }), query: () => [["expires", "4102444800"], ["signature", "0".repeat(64)]] },
  "POST /legacy/chat": {
    body: (w) => ({ thread_id: w.threadId, message: "Where is the office located?", service_mode_name: "support", streaming: false, start_new_conversation: false }),
  },
  "POST /legacy/create_thread": {},
  "POST /legacy/retrieve_conversations": { query: (w) => [["thread_id", w.threadId], ["page", "1"], ["limit", "10"]] },
  "POST /legacy/end_conversation": { body: thread },
  "POST /legacy/get_followup": { body: (w) => ({ thread_id: w.threadId, streaming: false, service_mode_name: "support", start_new_conversation: false }) },
  "POST /legacy/retrieve_conversation_summary": { body: thread, summaryShape: true },
  "POST /legacy/generate-token/:thread_id": { ids: thread },
  "POST /admin/organizations": { body: () => ({ name: "Fuzzed organization" }) },
  "POST /admin/organizations/:org_id/api-keys": { ids: (w) => ({ org_id: w.organizationId }) },
  "DELETE /admin/api-keys/:key_id": { ids: (w) => ({ key_id: w.spareKeyId }) },
  "POST /admin/organizations/:org_id/projects": { ids: (w) => ({ org_id: w.organizationId }), body: () => ({ name: "fuzzed", config: {} }) },
  "PUT /admin/projects/:project_id/config": { ids: (w) => ({ project_id: w.spareProjectId }), body: () => ({ config: { conversation: { lock_on_end: false } } }) },
  "GET /admin/projects/:project_id": { ids: (w) => ({ project_id: w.spareProjectId }) },
  "GET /admin/projects/:project_id/versions/:version_id/config": { ids: (w) => ({ project_id: w.spareProjectId, version_id: w.spareVersionId }) },
  "GET /admin/organizations": { query: () => [["limit", "5"]] },
  "GET /admin/organizations/:org_id/projects": { ids: (w) => ({ org_id: w.organizationId }), query: () => [["limit", "5"]] },
  "GET /admin/organizations/:org_id/api-keys": { ids: (w) => ({ org_id: w.organizationId }), query: () => [["limit", "5"]] },
  "POST /admin/api-keys/:key_id/rotate": { ids: (w) => ({ key_id: w.spareKeyId }) },
  "GET /healthz": {},
  "GET /readyz": {},
  "GET /widget.js": {},
  "GET /metrics": {},
  "GET /openapi.json": {},
};

const methodsWithSamples = new Set<string>(["GET", "POST", "PUT", "PATCH", "DELETE"]);
const keyOf = (entry: RouteEntry) => `${entry.method} ${entry.url}`;

/** Every route the suite's server registers (sockets included) that has a valid request above: no route escapes. */
export const endpoints: Endpoint[] = [];
/** Registered routes that have no valid request above: each is a failing test until it gets one. */
export const unsampledRoutes: string[] = [];

/** Fills the two lists above from a server's route catalogue (`buildWorld` does it for each suite). */
function catalogue(server: FastifyInstance): void {
  const routes = registeredRoutes(server);
  const sampled = routes.flatMap((entry) => {
    const sample = samples[keyOf(entry)];
    if (!sample || !methodsWithSamples.has(entry.method)) return [];
    return [{ method: entry.method as Endpoint["method"], route: entry.url, access: entry.access, ...sample }];
  });
  endpoints.splice(0, endpoints.length, ...sampled);
  unsampledRoutes.splice(0, unsampledRoutes.length, ...routes.filter((entry) => !(keyOf(entry) in samples) || !methodsWithSamples.has(entry.method)).map(keyOf));
}

export const nameOf = (endpoint: Endpoint) => `${endpoint.method} ${endpoint.route}`;

export function endpoint(method: Endpoint["method"], route: string): Endpoint {
  const found = endpoints.find((candidate) => candidate.method === method && candidate.route === route);
  if (!found) throw new Error(`no endpoint ${method} ${route}`);
  return found;
}

export function pathParams(endpoint: Endpoint): string[] {
  return [...endpoint.route.matchAll(/:(\w+)/g)].map((match) => match[1]!);
}

/** The route with its parameters filled in (percent-encoded) and the query appended as given. */
export function urlOf(endpoint: Endpoint, ids: Record<string, string>, query: [string, string][] = []): string {
  const path = endpoint.route.replace(/:(\w+)/g, (_, name: string) => encodeURIComponent(ids[name] ?? ""));
  const search = query.map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`).join("&");
  return search === "" ? path : `${path}?${search}`;
}

/**
 * Whether an endpoint takes a Parley credential in Authorization (the admin key, an API key, a thread token), rather
 * than none or one of its own: a signed link, a web call's join token, a vendor's signature or stream.
 */
export const takesCredential = (endpoint: Endpoint) => endpoint.access === "admin" || endpoint.access === "apiKey" || endpoint.access === "thread";

/** The credential a caller of the endpoint normally sends. */
export function credentialFor(endpoint: Endpoint, world: World): Record<string, string> {
  if (endpoint.access === "admin") return { authorization: `Bearer ${adminKey}` };
  if (!takesCredential(endpoint)) return {};
  return { authorization: world.apiKey };
}

/** A valid request to the endpoint, to be spoiled by the caller. */
export function validRequest(endpoint: Endpoint, world: World): InjectOptions {
  const body = endpoint.body?.(world);
  return {
    method: endpoint.method,
    url: urlOf(endpoint, endpoint.ids?.(world) ?? {}, endpoint.query?.(world)),
    headers: credentialFor(endpoint, world),
    ...(body === undefined ? {} : { payload: body }),
  };
}

/** The app listening on a local port (started on first use), as a ws:// base address. */
async function socketBase(h: Harness): Promise<string> {
  const address = h.server.server.address();
  if (address !== null && typeof address === "object") return `ws://127.0.0.1:${address.port}`;
  return (await h.server.listen({ port: 0, host: "127.0.0.1" })).replace(/^http/, "ws");
}

/** A WebSocket upgrade: 101 when the server accepts it (the socket is dropped at once), else its HTTP answer. */
function upgrade(url: string, headers: Record<string, string>): Promise<TestResponse> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers });
    const answer = (status: number, responseHeaders: TestResponse["headers"], body: string) =>
      resolve({ status, headers: responseHeaders, body, json: <T>() => JSON.parse(body) as T });
    socket.once("open", () => {
      socket.terminate();
      answer(101, {}, "");
    });
    // With this listener `ws` leaves the refused request open; it is destroyed once its answer is read.
    socket.once("unexpected-response", (request, response) => {
      let body = "";
      response.on("data", (chunk: Buffer) => (body += chunk.toString()));
      response.on("end", () => {
        request.destroy();
        answer(response.statusCode ?? 0, response.headers, body);
      });
    });
    socket.once("error", reject);
  });
}

/** Sends the request to the endpoint: injected, or as a real WebSocket upgrade for a socket route. */
export async function send(h: Harness, endpoint: Endpoint | undefined, request: InjectOptions): Promise<TestResponse> {
  if (!endpoint?.socket) return h.request(request);
  const headers = Object.fromEntries(Object.entries(request.headers ?? {}).map(([name, value]) => [name, String(value)]));
  return upgrade(`${await socketBase(h)}${String(request.url)}`, headers);
}

function parseBody(response: TestResponse, context: string): unknown {
  try {
    return JSON.parse(response.body);
  } catch {
    assert.fail(`${context}: ${response.status} with a body that is not JSON: ${JSON.stringify(response.body.slice(0, 200))}`);
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

function assertValidationItem(item: unknown, context: string): void {
  assert.ok(isRecord(item), `${context}: a 422 item is not an object`);
  const keys = Object.keys(item);
  const expected = "ctx" in item ? ["type", "loc", "msg", "input", "ctx"] : ["type", "loc", "msg", "input"];
  assert.deepEqual(keys, expected, `${context}: 422 item keys`);
  assert.equal(typeof item["type"], "string", `${context}: type`);
  assert.equal(typeof item["msg"], "string", `${context}: msg`);
  const loc = item["loc"];
  assert.ok(Array.isArray(loc) && loc.length > 0, `${context}: loc`);
  assert.ok(["body", "query", "path", "header"].includes(String(loc[0])), `${context}: loc starts with ${String(loc[0])}`);
  assert.ok(loc.every((part) => typeof part === "string" || Number.isInteger(part)), `${context}: loc parts`);
  if ("ctx" in item) assert.ok(isRecord(item["ctx"]), `${context}: ctx`);
}

/**
 * Never a server error (the one exception: `/chat` with `simulate`, documented as 501), and every refusal in its
 * documented shape: 422 `{"detail":[{type,loc,msg,input,(ctx)}]}`, any other 4xx `{"detail": string}`, and the legacy
 * summary's `{error, status_code}`.
 */
export function assertDocumented(endpoint: Endpoint | undefined, response: TestResponse, context: string): void {
  const notImplemented = response.status === 501 && endpoint?.route === "/chat";
  assert.ok(response.status < 500 || notImplemented, `${context}: server error ${response.status} ${response.body.slice(0, 300)}`);
  if (response.status < 400) return;
  const body = parseBody(response, context);
  assert.ok(isRecord(body), `${context}: error body is not an object: ${response.body.slice(0, 200)}`);
  if (endpoint?.summaryShape && "error" in body) {
    assert.deepEqual(Object.keys(body), ["error", "status_code"], `${context}: summary error keys`);
    assert.equal(typeof body["error"], "string");
    assert.equal(body["status_code"], response.status, `${context}: status_code`);
    return;
  }
  assert.deepEqual(Object.keys(body), ["detail"], `${context}: error body keys in ${response.body.slice(0, 200)}`);
  if (response.status === 422) {
    const detail = body["detail"];
    assert.ok(Array.isArray(detail) && detail.length > 0, `${context}: 422 detail is a non-empty array`);
    for (const item of detail) assertValidationItem(item, context);
  } else {
    assert.equal(typeof body["detail"], "string", `${context}: detail is a string in ${response.body.slice(0, 200)}`);
  }
}

/** A refusal: a documented 4xx. */
export function assertRefused(endpoint: Endpoint | undefined, response: TestResponse, context: string): void {
  assert.ok(response.status >= 400 && response.status < 500, `${context}: expected a refusal, got ${response.status} ${response.body.slice(0, 300)}`);
  assertDocumented(endpoint, response, context);
}

const organizationTables: [string, string, string[]][] = [
  ["organizations", "id = $1", []],
  ["api_keys", "organization_id = $1", ["last_used_at"]],
  ["projects", "organization_id = $1", []],
  ["project_config_versions", "organization_id = $1", []],
  ["threads", "organization_id = $1", ["lock_token", "lock_pid", "lock_until"]],
  ["conversations", "thread_id IN (SELECT id FROM threads WHERE organization_id = $1)", []],
  ["messages", "thread_id IN (SELECT id FROM threads WHERE organization_id = $1)", []],
  ["calls", "organization_id = $1", []],
  ["thread_events", "thread_id IN (SELECT id FROM threads WHERE organization_id = $1)", []],
];

/**
 * Row count and checksum of every row the organization owns (leaving out bookkeeping that reads may touch: a key's
 * last use, a thread's chat lease), plus the number of organizations, keys and projects in the whole database.
 */
export async function snapshot(h: Harness, organizationId: string): Promise<Record<string, string>> {
  const result: Record<string, string> = {};
  for (const [table, where, volatile] of organizationTables) {
    const row = `(to_jsonb(t)${volatile.map((column) => ` - '${column}'`).join("")})::text`;
    const [summary] = await h.database.db.query<{ n: number; sum: string }>(
      `SELECT count(*)::int AS n, md5(coalesce(string_agg(${row}, '|' ORDER BY ${row}), '')) AS sum FROM ${table} t WHERE ${where}`,
      [organizationId],
    );
    result[table] = `${summary?.n} ${summary?.sum}`;
  }
  for (const table of ["organizations", "api_keys", "projects"]) {
    const [count] = await h.database.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`);
    result[`all ${table}`] = String(count?.n);
  }
  return result;
}

/** Runs `work` and checks that the organization's stored data is exactly as before. */
export async function unchanged(h: Harness, organizationId: string, work: () => Promise<void>): Promise<void> {
  const before = await snapshot(h, organizationId);
  await work();
  assert.deepEqual(await snapshot(h, organizationId), before, "stored data changed");
}

/** Runs a fast-check property with a bounded number of runs; FC_SEED replays a reported failure. */
export async function property<T>(arbitrary: fc.Arbitrary<T>, predicate: (value: T) => Promise<void>, numRuns: number): Promise<void> {
  const seed = process.env.FC_SEED === undefined ? undefined : Number(process.env.FC_SEED);
  await fc.assert(fc.asyncProperty(arbitrary, predicate), { numRuns, ...(seed === undefined ? {} : { seed }) });
}
