import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import { before, test } from "node:test";
import type { InjectOptions } from "fastify";
import { uuidv7 } from "../../src/domain/shared/ids.js";
import { forEachDatabase } from "../support/harness.js";
import { accountId, assertDocumented, buildWorld, endpoint, endpoints, send, snapshot, validRequest, type Endpoint, type World } from "./support.js";

/** An id of theirs and an id that names nothing, sent the same way with my own API key. */
interface Probe {
  name: string;
  foreign: string;
  missing: string;
  request(id: string): InjectOptions;
  /** Sent as a WebSocket upgrade. */
  socket?: boolean;
  /** The documented answer for both, with the id written as `<id>` wherever it is echoed. */
  expected?: { status: number; body: unknown };
}

const events = () => endpoint("GET", "/threads/:thread_id/events");
const theirAccountId = "9e8d7c6b-5a49-4382-9170-6f5e4d3c2b1a";
const inADay = () => new Date(Date.now() + 86_400_000).toISOString();

/** A field of a request that names a resource: its place in the body or the query, as the OpenAPI document declares it. */
interface IdField {
  endpoint: Endpoint;
  in: "body" | "query";
  path: string[];
}

/** Ids and names by field name: theirs (each must be refused) and one that names nothing (the refusal to match). */
interface ForeignValues {
  foreign: string[];
  missing: string;
}

/**
 * Fields whose values are not ids of Parley's: the organization's own booking system's id travels with a call to
 * its tools and prompt, and names nothing Parley looks up.
 */
const notParleyIds = new Set(["appointment_opening_id"]);
const namesResource = (name: string) => /(_id|_name)$/.test(name) && !notParleyIds.has(name);

interface OpenApiSchema {
  properties?: Record<string, OpenApiSchema>;
  anyOf?: OpenApiSchema[];
}
interface OpenApiOperation {
  parameters?: { name: string; in: string }[];
  requestBody?: { content: Record<string, { schema: OpenApiSchema }> };
}

function bodyFieldPaths(schema: OpenApiSchema, prefix: string[] = []): string[][] {
  const own = Object.entries(schema.properties ?? {}).flatMap(([name, property]) => [
    ...(namesResource(name) ? [[...prefix, name]] : []),
    ...bodyFieldPaths(property, [...prefix, name]),
  ]);
  return [...own, ...(schema.anyOf ?? []).flatMap((option) => bodyFieldPaths(option, prefix))];
}

/** Every id- or name-bearing body and query field of every route callable with an organization's credential. */
function idFields(document: { paths: Record<string, Record<string, OpenApiOperation>> }): IdField[] {
  return endpoints
    .filter((candidate) => candidate.access === "apiKey" || candidate.access === "thread")
    .flatMap((candidate) => {
      const operation = document.paths[candidate.route.replace(/:(\w+)/g, "{$1}")]?.[candidate.method.toLowerCase()];
      if (!operation) return [];
      const query = (operation.parameters ?? []).filter((parameter) => parameter.in === "query" && namesResource(parameter.name));
      const body = operation.requestBody?.content["application/json"]?.schema;
      return [
        ...query.map((parameter) => ({ endpoint: candidate, in: "query" as const, path: [parameter.name] })),
        ...(body ? bodyFieldPaths(body).map((path) => ({ endpoint: candidate, in: "body" as const, path })) : []),
      ];
    });
}

/** The endpoint's valid request with one field set to `value`. */
function withField(field: IdField, world: World, value: string): InjectOptions {
  const request = validRequest(field.endpoint, world);
  if (field.in === "query") {
    const query = (field.endpoint.query?.(world) ?? []).filter(([name]) => name !== field.path[0]);
    const [path] = String(request.url).split("?");
    const search = [...query, [field.path[0]!, value]].map(([name, given]) => `${encodeURIComponent(name!)}=${encodeURIComponent(given!)}`).join("&");
    return { ...request, url: `${path}?${search}` };
  }
  const body = structuredClone((request.payload ?? {}) as Record<string, unknown>);
  let node = body;
  for (const key of field.path.slice(0, -1)) node = (node[key] ??= {}) as Record<string, unknown>;
  node[field.path.at(-1)!] = value;
  return { ...request, payload: body };
}

/** The body with the probed id written as `<id>`, so that an echoed input does not tell the two apart. */
function normalized(body: string, id: string): unknown {
  return JSON.parse(body.split(JSON.stringify(id).slice(1, -1)).join("<id>"));
}

forEachDatabase("isolation between organizations", (h) => {
  let mine: World;
  let theirs: World;
  let freshThread: string;
  before(async () => {
    mine = await buildWorld(h());
    theirs = await buildWorld(h());
    freshThread = await h().thread(mine.apiKey);
    const config = { voice: { accounts: [{ id: theirAccountId, phone_numbers: ["+14155550199"] }] } };
    const project = await h().admin("POST", `/admin/organizations/${theirs.organizationId}/projects`, { name: "theirs-only", config });
    assert.equal(project.status, 201, project.body);
    const payload = { thread_id: theirs.threadId, message: "Do you sell zebras?", service_config_name: "support" };
    assert.equal((await h().request({ method: "POST", url: "/chat", headers: { authorization: theirs.apiKey }, payload })).status, 200);
  });

  const key = () => ({ authorization: mine.apiKey });
  const get = (url: string): InjectOptions => ({ method: "GET", url, headers: key() });
  const post = (url: string, payload?: Record<string, unknown>): InjectOptions => ({ method: "POST", url, headers: key(), ...(payload ? { payload } : {}) });
  const notFound = (what: string) => ({ status: 404, body: { detail: `${what} not found` } });

  function probes(): Probe[] {
    const thread = (name: string, request: (id: string) => InjectOptions, expected?: Probe["expected"]): Probe => ({
      name,
      foreign: theirs.threadId,
      missing: uuidv7(),
      request,
      ...(expected ? { expected } : {}),
    });
    const phoneCall = (body: Record<string, unknown>) => ({ callee: "+14155552671", project_id: mine.projectId, scheduled_for: inADay(), ...body });
    return [
      thread("GET /threads/{id}", (id) => get(`/threads/${id}`), notFound("Thread")),
      thread("PATCH /threads/{id}", (id) => ({ method: "PATCH", url: `/threads/${id}`, headers: key(), payload: { alias: "stolen" } }), notFound("Thread")),
      {
        name: "GET /threads/by-alias/{their alias}",
        foreign: theirs.alias,
        missing: `caller-${randomUUID()}`,
        request: (alias) => get(`/threads/by-alias/${encodeURIComponent(alias)}`),
        expected: notFound("Thread"),
      },
      thread("POST /threads/{id}/token", (id) => post(`/threads/${id}/token`), notFound("Thread")),
      thread("POST /threads/{id}/json-input", (id) => post(`/threads/${id}/json-input`, { project_name: "support", json_input: '{"plan":"stolen"}' }), notFound("Thread")),
      thread("GET /threads/{id}/messages", (id) => get(`/threads/${id}/messages`), notFound("Thread")),
      thread("GET /threads/{id}/messages/search", (id) => get(`/threads/${id}/messages/search?query=zebras`), notFound("Thread")),
      { ...thread("GET /threads/{id}/events", (id) => get(`/threads/${id}/events`), notFound("Thread")), socket: true },
      thread("POST /chat", (id) => post("/chat", { thread_id: id, message: "Hello", service_config_name: "support" }), notFound("Thread")),
      thread("POST /voice/{id}/phone-call", (id) => post(`/voice/${id}/phone-call`, phoneCall({})), notFound("Thread")),
      thread("DELETE /voice/{id}/phone-call", (id) => ({ method: "DELETE", url: `/voice/${id}/phone-call`, headers: key() }), notFound("Thread")),
      thread("POST /voice/{id}/web-call", (id) => post(`/voice/${id}/web-call`, { project_id: mine.projectId }), notFound("Thread")),
      thread("GET /calls?thread_id={id}", (id) => get(`/calls?thread_id=${id}`), { status: 200, body: { calls: [], pagination: { cursor: null } } }),
      thread("POST /legacy/chat", (id) => post("/legacy/chat", { thread_id: id, message: "Hello", service_mode_name: "support" }), notFound("Thread")),
      thread("POST /legacy/retrieve_conversations", (id) => post(`/legacy/retrieve_conversations?thread_id=${id}`), notFound("Thread")),
      thread("POST /legacy/end_conversation", (id) => post("/legacy/end_conversation", { thread_id: id }), { status: 400, body: { detail: "Thread not found" } }),
      thread("POST /legacy/get_followup", (id) => post("/legacy/get_followup", { thread_id: id, service_mode_name: "support" }), notFound("Thread")),
      thread("POST /legacy/retrieve_conversation_summary", (id) => post("/legacy/retrieve_conversation_summary", { thread_id: id }), {
        status: 404,
        body: { error: "Thread not found", status_code: 404 },
      }),
      thread("POST /legacy/generate-token/{id}", (id) => post(`/legacy/generate-token/${id}`), notFound("Thread")),
      { name: "GET /calls/{id}", foreign: theirs.callId, missing: uuidv7(), request: (id) => get(`/calls/${id}`), expected: notFound("Call") },
      {
        name: "phone call with their project_id",
        foreign: theirs.projectId,
        missing: randomUUID(),
        request: (id) => post(`/voice/${freshThread}/phone-call`, phoneCall({ project_id: id })),
        expected: notFound("Project"),
      },
      { name: "web call with their project_id", foreign: theirs.projectId, missing: randomUUID(), request: (id) => post(`/voice/${freshThread}/web-call`, { project_id: id }), expected: notFound("Project") },
      {
        name: "phone call with their voice_provider_account_id",
        foreign: theirAccountId,
        missing: randomUUID(),
        request: (id) => post(`/voice/${freshThread}/phone-call`, phoneCall({ voice_provider_account_id: id })),
      },
      { name: "POST /threads with their project_name", foreign: "theirs-only", missing: "nobody-has-this", request: (name) => post("/threads", { project_name: name }), expected: notFound("Project") },
      { name: "chat with their service_config_name", foreign: "theirs-only", missing: "nobody-has-this", request: (name) => post("/chat", { thread_id: freshThread, message: "Hi", service_config_name: name }) },
      {
        name: "json-input with their project_name",
        foreign: "theirs-only",
        missing: "nobody-has-this",
        request: (name) => post(`/threads/${freshThread}/json-input`, { project_name: name, json_input: "{}" }),
        expected: notFound("Project"),
      },
      {
        name: "legacy chat with their service_mode_name",
        foreign: "theirs-only",
        missing: "nobody-has-this",
        request: (name) => post("/legacy/chat", { thread_id: freshThread, message: "Hi", service_mode_name: name }),
      },
      {
        name: "GET /calls?project_name={their project}",
        foreign: "theirs-only",
        missing: "nobody-has-this",
        request: (name) => get(`/calls?project_name=${name}`),
        expected: { status: 200, body: { calls: [], pagination: { cursor: null } } },
      },
      {
        name: "their history cursor on my thread",
        foreign: theirs.historyCursor,
        missing: Buffer.from('{"k":"h","t":"x","p":1}').toString("base64url"),
        request: (cursor) => get(`/threads/${mine.threadId}/messages?cursor=${cursor}`),
      },
      {
        name: "their search cursor on my thread",
        foreign: theirs.searchCursor,
        missing: Buffer.from('{"k":"s","t":"x","p":1}').toString("base64url"),
        request: (cursor) => get(`/threads/${mine.threadId}/messages/search?query=hours&cursor=${cursor}`),
      },
    ];
  }

  test("every id, name and cursor of another organization is answered exactly as one that names nothing, and neither side changes", async () => {
    const before = [await snapshot(h(), mine.organizationId), await snapshot(h(), theirs.organizationId)];
    for (const probe of probes()) {
      const target = probe.socket ? events() : undefined;
      const foreign = await send(h(), target, probe.request(probe.foreign));
      const missing = await send(h(), target, probe.request(probe.missing));
      assert.ok(foreign.status >= 400 || probe.expected?.status === 200, `${probe.name}: ${foreign.status} ${foreign.body}`);
      assertDocumented(probe.name.includes("summary") ? endpoint("POST", "/legacy/retrieve_conversation_summary") : undefined, foreign, probe.name);
      assert.equal(foreign.status, missing.status, `${probe.name}: ${foreign.body} vs ${missing.body}`);
      assert.deepEqual(normalized(foreign.body, probe.foreign), normalized(missing.body, probe.missing), probe.name);
      if (probe.expected) {
        assert.equal(foreign.status, probe.expected.status, `${probe.name}: ${foreign.body}`);
        assert.deepEqual(foreign.json(), probe.expected.body, probe.name);
      }
    }
    assert.deepEqual([await snapshot(h(), mine.organizationId), await snapshot(h(), theirs.organizationId)], before);
  });

  test("every id and name a body or query carries, found from the routes' schemas, is refused for another organization as for nothing", async () => {
    const versionOf = async (projectId: string) => (await h().admin("GET", `/admin/projects/${projectId}`)).json<{ config_version_id: string }>().config_version_id;
    const theirName: ForeignValues = { foreign: ["theirs-only"], missing: "nobody-has-this" };
    const values: Record<string, ForeignValues> = {
      thread_id: { foreign: [theirs.threadId], missing: uuidv7() },
      project_id: { foreign: [theirs.projectId], missing: randomUUID() },
      // A version of their project, and one of my own other project: a version belongs to the project named.
      config_version_id: { foreign: [await versionOf(theirs.projectId), await versionOf(mine.spareProjectId)], missing: uuidv7() },
      voice_provider_account_id: { foreign: [theirAccountId], missing: randomUUID() },
      project_name: theirName,
      service_config_name: theirName,
      service_mode_name: theirName,
    };
    const document = (await h().request({ method: "GET", url: "/openapi.json" })).json<{ paths: Record<string, Record<string, OpenApiOperation>> }>();
    const fields = idFields(document);
    const unknown = fields.filter((field) => !(field.path.at(-1)! in values)).map((field) => `${field.endpoint.method} ${field.endpoint.route} ${field.in}.${field.path.join(".")}`);
    assert.deepEqual(unknown, [], "an id-bearing field with no foreign value to try: add one above");
    for (const name of ["config_version_id", "project_id", "voice_provider_account_id", "thread_id", "service_config_name"]) {
      assert.ok(fields.some((field) => field.path.at(-1) === name), `the routes' schemas name ${name} somewhere`);
    }
    const before = [await snapshot(h(), mine.organizationId), await snapshot(h(), theirs.organizationId)];
    for (const field of fields) {
      const { foreign, missing } = values[field.path.at(-1)!]!;
      const name = `${field.endpoint.method} ${field.endpoint.route} ${field.in}.${field.path.join(".")}`;
      const nothing = await send(h(), field.endpoint, withField(field, mine, missing));
      assert.notEqual(nothing.status, 409, `${name}: the probe must reach the look-up, not a conflict: ${nothing.body}`);
      for (const value of foreign) {
        const answer = await send(h(), field.endpoint, withField(field, mine, value));
        assert.equal(answer.status, nothing.status, `${name} = ${value}: ${answer.body} vs ${nothing.body}`);
        assert.deepEqual(normalized(answer.body, value), normalized(nothing.body, missing), name);
      }
    }
    assert.deepEqual([await snapshot(h(), mine.organizationId), await snapshot(h(), theirs.organizationId)], before);
  });

  test("listings never include another organization's calls or messages, even through their cursor", async () => {
    const listed = (await h().request(get("/calls?limit=100"))).json<{ calls: { id: string; thread_id: string }[] }>().calls;
    const ours = new Set(listed.map((call) => call.id));
    assert.ok(ours.has(mine.callId) && !ours.has(theirs.callId), JSON.stringify(listed));
    assert.ok(listed.every((call) => call.thread_id === mine.threadId || call.thread_id === mine.otherThreadId), JSON.stringify(listed));
    const viaTheirCursor = await h().request(get(`/calls?cursor=${theirs.callCursor}`));
    assert.equal(viaTheirCursor.status, 200, viaTheirCursor.body);
    assert.ok(viaTheirCursor.json<{ calls: { id: string }[] }>().calls.every((call) => ours.has(call.id)), viaTheirCursor.body);
    const search = await h().request(get(`/threads/${mine.threadId}/messages/search?query=zebras`));
    assert.deepEqual(search.json(), { matches: [], pagination: { cursor: null } });
    const legacy = await h().request(post(`/legacy/retrieve_conversations?thread_id=${mine.threadId}&limit=100`));
    assert.ok(!legacy.body.includes("zebras"), legacy.body);
    const theirKeyOnTheirCall = await h().request({ method: "GET", url: `/calls/${theirs.callId}`, headers: { authorization: theirs.apiKey } });
    assert.equal(theirKeyOnTheirCall.status, 200, "the foreign call exists for its owner");
  });

  test("my own account id and project still work, so the refusals above are about ownership", async () => {
    const call = await h().request(post(`/voice/${freshThread}/phone-call`, { callee: "+14155552671", project_id: mine.projectId, scheduled_for: inADay(), voice_provider_account_id: accountId }));
    assert.equal(call.status, 200, call.body);
  });
});
