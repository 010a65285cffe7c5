import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { createServer, connect, type Socket } from "node:net";
import { before, test } from "node:test";
import WebSocket from "ws";
import {
  AuthenticationError, ConflictError, NotFoundError, Parley, PermissionDeniedError, ValidationError, isEvent, type ProjectConfig, type ThreadEvent, type ToolCall,
} from "../../packages/client/src/index.js";
import { startFakeOpenAi } from "../support/fake-llm-servers.js";
import { startToolReceiver } from "../support/tool-receiver.js";
import { clientSchemaPath, clientSchemaSource } from "../../scripts/client-schema.js";
import { acmeAgent } from "../support/fixtures.js";
import { adminKey, forEachDatabase } from "../support/harness.js";

const voiceProject: ProjectConfig = {
  agent: { ...acmeAgent, provider: "builtin" },
  pricing: { message_usd: 0.002 },
  voice: { accounts: [{ id: "6f1f6c43-3b8f-4d9e-9a57-2f0c4f1b7a01", phone_numbers: ["+14155550100"] }] },
};

interface OpenApiDocument {
  paths: Record<string, Record<string, unknown>>;
}

/** A TCP proxy to the server whose connections the test can cut, as a network failure would. */
async function cuttableProxy(target: string): Promise<{ url: string; cut(): void; close(): Promise<void> }> {
  const { hostname, port } = new URL(target);
  const open = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(port), hostname);
    for (const socket of [client, upstream]) {
      open.add(socket);
      socket.on("close", () => open.delete(socket));
      socket.on("error", () => undefined);
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (typeof address !== "object" || address === null) throw new Error("proxy has no address");
  return {
    url: `http://127.0.0.1:${address.port}`,
    cut: () => {
      for (const socket of open) socket.destroy();
    },
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        for (const socket of open) socket.destroy();
      }),
  };
}

/** Every (method, path template) of the OpenAPI document. */
function operationsOf(document: OpenApiDocument): string[] {
  return Object.entries(document.paths).flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`)).sort();
}

/** The template of the document that a concrete request URL matches. */
function templateOf(document: OpenApiDocument, method: string, url: string): string | undefined {
  const path = new URL(url).pathname;
  for (const [template, methods] of Object.entries(document.paths)) {
    if (!(method.toLowerCase() in methods)) continue;
    const pattern = new RegExp(`^${template.replace(/\{\w+\}/g, "[^/]+")}$`);
    if (pattern.test(path)) return `${method} ${template}`;
  }
  return undefined;
}

forEachDatabase("the typed client", (h) => {
  let baseUrl = "";
  const document = async () => (await h().request({ method: "GET", url: "/openapi.json" })).json<OpenApiDocument>();
  before(async () => {
    baseUrl = await h().server.listen({ port: 0, host: "127.0.0.1" });
  });

  test("the client's schema types are generated from the server's current OpenAPI document", async () => {
    const expected = await clientSchemaSource(await document());
    const committed = await readFile(clientSchemaPath, "utf8");
    assert.ok(committed === expected, "packages/client/src/openapi.ts is out of date: run `npm run client:schema`");
  });

  test("every operation of the OpenAPI document is reachable through the client", async () => {
    const spec = await document();
    const called = new Set<string>();
    const recording: typeof fetch = async (input, init) => {
      const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
      const template = templateOf(spec, init?.method ?? "GET", url);
      assert.ok(template, `the client called ${init?.method} ${url}, which the document does not have`);
      called.add(template);
      return fetch(input, init);
    };
    const admin = new Parley({ baseUrl, adminKey, fetch: recording });
    const organization = await admin.admin.createOrganization("Client org");
    const project = await admin.admin.createProject(organization.id, "support", voiceProject);
    const { config_version_id } = await admin.admin.publishConfig(project.id, voiceProject);
    assert.match(JSON.stringify(await admin.admin.getProject(project.id)), new RegExp(config_version_id));
    assert.equal((await admin.admin.getConfigVersion(project.id, config_version_id)).version, 2);
    const second = await admin.admin.createApiKey(organization.id);
    assert.ok((await admin.admin.listOrganizations({ limit: 100 })).organizations.length > 0);
    assert.deepEqual((await admin.admin.listProjects(organization.id)).projects.map((listed) => listed.id), [project.id]);
    assert.equal((await admin.admin.listApiKeys(organization.id)).api_keys.length, 2);
    const rotated = await admin.admin.rotateApiKey(second.id);
    assert.equal(rotated.replaced_key_id, second.id);
    await admin.admin.revokeApiKey(rotated.id);
    await assert.rejects(new Parley({ baseUrl, credential: second.api_key }).threads.list(), AuthenticationError);

    const parley = new Parley({ baseUrl, credential: organization.api_key, fetch: recording });
    assert.deepEqual(await parley.system.health(), { status: "ok" });
    assert.deepEqual(await parley.system.ready(), { status: "ok" });
    assert.match(await parley.system.metrics(), /parley_/);

    const { thread_id } = await parley.threads.create({ project_name: "support", alias: "client" });
    assert.equal((await parley.threads.get(thread_id)).alias, "client");
    assert.equal((await parley.threads.setAlias(thread_id, "+14155550123")).alias, "+14155550123");
    assert.equal((await parley.threads.byAlias("+14155550123")).id, thread_id);
    await assert.rejects(parley.threads.byAlias("client"), NotFoundError);
    const other = await parley.threads.create();
    await assert.rejects(parley.threads.setAlias(other.thread_id, "+14155550123"), ConflictError);
    assert.deepEqual((await parley.threads.list({ limit: 5 })).threads.map((thread) => thread.id), [other.thread_id, thread_id]);
    assert.equal((await parley.threads.jsonInput(thread_id, { project_name: "support", json_input: '{"name":"Ada"}' })).response, "JSON input received");
    const { access_token } = await parley.threads.token(thread_id);

    const asThread = new Parley({ baseUrl, credential: access_token, fetch: recording });
    const reply = await asThread.chat.send({ thread_id, message: "What are your opening hours?", service_config_name: "support" });
    assert.equal(reply.message, "We are open from 9 to 5 on weekdays.");
    assert.equal((await asThread.messages.list(thread_id)).messages.length, 2);
    assert.equal((await asThread.messages.search(thread_id, { query: "hours" })).matches.length, 1);
    await assert.rejects(asThread.threads.list(), PermissionDeniedError);
    const simulated = await parley.chat.send({ thread_id, message: "What are your opening hours?", service_config_name: "support", simulate: { max_turns: 2, create: true, evaluate: true } });
    const runId = simulated.extras.simulation?.id;
    assert.ok(runId);
    assert.equal((await parley.simulations.get(runId)).id, runId);

    const scheduled = await parley.voice.phoneCall(thread_id, { callee: "+14155552671", project_id: project.id, scheduled_for: new Date(Date.now() + 3_600_000).toISOString() });
    assert.equal(scheduled.status, "scheduled");
    assert.equal((await parley.calls.get(scheduled.id)).status, "scheduled");
    assert.deepEqual(await parley.voice.endPhoneCall(thread_id), { response: "Call ended" });
    assert.equal((await parley.voice.webCall(thread_id, { project_id: project.id })).status, "queued");
    assert.equal((await parley.calls.list({ thread_id })).calls.length, 2);
    await assert.rejects(parley.voice.simulatedInbound({ project_id: project.id, from: "+14155552671" }), ValidationError);
    await assert.rejects(parley.calls.recording(`${baseUrl}/recordings/${scheduled.id}.wav?expires=1&signature=forged`), PermissionDeniedError);

    const legacyThread = (await parley.legacy.createThread()).thread_id;
    assert.equal((await parley.legacy.chat({ thread_id: legacyThread, message: "Where is the office located?", service_mode_name: "support" })).message, "Our office is at 1 Main Street.");
    let legacyStreamed = "";
    for await (const event of parley.legacy.chatStream({ thread_id: legacyThread, message: "Hello", service_mode_name: "support" })) {
      if (event.type === "token") legacyStreamed += event.token;
    }
    assert.ok(legacyStreamed.length > 0);
    assert.equal((await parley.legacy.retrieveConversations({ thread_id: legacyThread })).messages.length, 4);
    assert.equal(typeof (await parley.legacy.retrieveConversationSummary(legacyThread)).conversation_summary, "string");
    assert.ok((await parley.legacy.getFollowup({ thread_id: legacyThread, service_mode_name: "support" })).message.length > 0);
    for await (const event of parley.legacy.getFollowupStream({ thread_id: legacyThread, service_mode_name: "support" })) if (event.type === "message") break;
    assert.ok((await parley.legacy.endConversation(legacyThread)).message);
    assert.ok((await parley.legacy.generateToken(legacyThread)).access_token);

    assert.deepEqual([...called].sort(), operationsOf(spec));
  });

  test("streamed chat is an async iterator whose tokens add up to the reply", async () => {
    const parley = new Parley({ baseUrl, adminKey });
    const organization = await parley.admin.createOrganization("Streams");
    await parley.admin.createProject(organization.id, "support", voiceProject);
    const client = new Parley({ baseUrl, credential: organization.api_key });
    const { thread_id } = await client.threads.create();
    const events = [];
    for await (const event of client.chat.stream({ thread_id, message: "What are your opening hours?", service_config_name: "support" })) events.push(event);
    const last = events.at(-1);
    assert.ok(last?.type === "message");
    const tokens = events.flatMap((event) => (event.type === "token" ? [event] : []));
    assert.ok(tokens.length > 3);
    assert.deepEqual(tokens.map((token) => token.index), tokens.map((_, index) => index));
    assert.equal(tokens.map((token) => token.token).join(""), last.response.message);
  });

  test("a reply's tool calls are typed: the chat response carries them in extras.tool_calls", async () => {
    const model = await startFakeOpenAi();
    const secret = "client-tool-secret-0123456789";
    const receiver = await startToolReceiver(secret);
    try {
      const parley = new Parley({ baseUrl, adminKey });
      const organization = await parley.admin.createOrganization("Tools");
      await parley.admin.createProject(organization.id, "support", {
        agent: { provider: "openai", base_url: model.url, tools: [{ name: "get_order", url: `${receiver.url}/json` }], tool_secret: secret },
      });
      model.setBehaviour([{ toolCalls: [{ name: "get_order", arguments: {} }] }, { chunks: ["It shipped."] }]);
      const client = new Parley({ baseUrl, credential: organization.api_key });
      const { thread_id } = await client.threads.create();
      const response = await client.chat.send({ thread_id, message: "Where is my order?", service_config_name: "support" });
      const calls: ToolCall[] = response.extras.tool_calls ?? [];
      assert.deepEqual(calls.map(({ name, status, result }) => ({ name, status, result })), [{ name: "get_order", status: "ok", result: { status: "shipped", tool: "get_order" } }]);
      assert.equal(response.message, "It shipped.");
    } finally {
      await model.close();
      await receiver.close();
    }
  });

  test("cursors are async iterators over pages that visit each item once", async () => {
    const parley = new Parley({ baseUrl, adminKey });
    const organization = await parley.admin.createOrganization("Pages");
    await parley.admin.createProject(organization.id, "support", voiceProject);
    const client = new Parley({ baseUrl, credential: organization.api_key });
    const threads: string[] = [];
    for (let index = 0; index < 5; index++) threads.push((await client.threads.create()).thread_id);
    const listed: string[] = [];
    for await (const page of client.threads.pages({ limit: 2 })) listed.push(...page.threads.map((thread) => thread.id));
    assert.deepEqual(listed, [...threads].reverse());

    const threadId = threads[0]!;
    for (let index = 0; index < 3; index++) await client.chat.send({ thread_id: threadId, message: `hours ${index}?`, service_config_name: "support" });
    const history: string[] = [];
    for await (const page of client.messages.pages(threadId, { limit: 4 })) history.unshift(...page.messages.map((message) => message.message_id));
    assert.equal(history.length, 6);
    assert.equal(new Set(history).size, 6);
    const matches: string[] = [];
    for await (const page of client.messages.searchPages(threadId, { query: "hours", limit: 1 })) matches.push(...page.matches.map((match) => match.message_id));
    assert.equal(matches.length, 3);
  });

  test("errors are typed exceptions that carry the 422 details", async () => {
    const parley = new Parley({ baseUrl, adminKey });
    const organization = await parley.admin.createOrganization("Errors");
    const client = new Parley({ baseUrl, credential: organization.api_key });
    const invalid = await client.threads.list({ limit: 500 }).catch((error: unknown) => error);
    assert.ok(invalid instanceof ValidationError);
    assert.equal(invalid.status, 422);
    assert.deepEqual(invalid.issues, [{ type: "less_than_equal", loc: ["query", "limit"], msg: "Input should be less than or equal to 100", input: "500", ctx: { le: 100 } }]);
    const missing = await client.threads.get("no-such-thread").catch((error: unknown) => error);
    assert.ok(missing instanceof NotFoundError);
    assert.equal(missing.detail, "Thread not found");
    assert.ok(missing.requestId);
    await assert.rejects(new Parley({ baseUrl, credential: "sk_wrong" }).threads.list(), AuthenticationError);
  });

  test("the events WebSocket is an async iterator that resumes after the last seq", async () => {
    const parley = new Parley({ baseUrl, adminKey });
    const organization = await parley.admin.createOrganization("Events");
    await parley.admin.createProject(organization.id, "support", voiceProject);
    const client = new Parley({ baseUrl, credential: organization.api_key, WebSocket });
    const { thread_id } = await client.threads.create();
    const events = client.events(thread_id);
    await events.opened;
    await client.chat.send({ thread_id, message: "Where is the office located?", service_config_name: "support" });
    const seen: ThreadEvent[] = [];
    for await (const event of events) {
      seen.push(event);
      if (seen.length === 2) break;
    }
    assert.deepEqual(seen.map((event) => event.seq), [1, 2]);
    const reply = seen[1]!;
    assert.ok(isEvent(reply, "message.created"));
    assert.equal(reply.message.message, "Our office is at 1 Main Street.");

    const replayed = client.events(thread_id, { after: 1 });
    for await (const event of replayed) {
      assert.equal(event.seq, 2);
      break;
    }
    // A dropped connection is resumed after the last seq seen: the events sent meanwhile arrive once, in order.
    const proxy = await cuttableProxy(baseUrl);
    const resuming = new Parley({ baseUrl: proxy.url, credential: organization.api_key, WebSocket }).events(thread_id, { after: 2 });
    await resuming.opened;
    proxy.cut();
    await client.chat.send({ thread_id, message: "What are your opening hours?", service_config_name: "support" });
    const resumed: number[] = [];
    for await (const event of resuming) {
      resumed.push(event.seq);
      if (resumed.length === 2) break;
    }
    assert.deepEqual(resumed, [3, 4]);
    await proxy.close();

    const refused = new Parley({ baseUrl, credential: "not-a-token", WebSocket }).events(thread_id);
    await assert.rejects(async () => {
      for await (const event of refused) assert.fail(`unexpected ${event.type}`);
    }, /refused/);
  });
});
