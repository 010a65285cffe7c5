import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import Retell from "retell-sdk";
import { forEachDatabase } from "../support/harness.js";
import { startFakeAnthropic, startFakeOpenAi, type CapturedRequest, type FakeBehaviour, type FakeLlmServer } from "../support/fake-llm-servers.js";
import { BIG_ANSWER, startToolReceiver, type ToolReceiver } from "../support/tool-receiver.js";
import { listen, TestSocket } from "../voice-calls/support.js";

const SECRET = "tool-secret-0123456789-abcdef";
const OTHER_SECRET = "other-secret-9876543210-zyxwvu";

interface ToolCallView {
  id: string;
  name: string;
  arguments: unknown;
  status: "ok" | "error" | "timeout";
  result: unknown;
  duration_ms: number;
}

interface ChatBody {
  message: string;
  extras: { user_message_id: string; conversation_id: number; reply_message_id: string; tool_calls?: ToolCallView[] };
}

const orderParameters = { type: "object", properties: { order: { type: "string", pattern: "^[A-Z][0-9]+$" } }, required: ["order"] };

function tool(name: string, url: string, extra: Record<string, unknown> = {}) {
  return { name, description: `The ${name} tool.`, parameters: orderParameters, url, ...extra };
}

/** The tool results a vendor request carries back to the model, in order (OpenAI `tool` messages, Anthropic `tool_result` blocks). */
function toolResultsIn(request: CapturedRequest): string[] {
  const messages = (request.json as { messages: { role: string; content: unknown; tool_call_id?: string }[] }).messages;
  return messages.flatMap((message) => {
    if (message.role === "tool") return [String(message.content)];
    if (!Array.isArray(message.content)) return [];
    return (message.content as { type: string; content?: unknown }[]).filter((block) => block.type === "tool_result").map((block) => String(block.content));
  });
}

/** A model that asks for `calls` in its first round and, once it has their results, answers `answer`. */
function oneRound(calls: FakeBehaviour["toolCalls"], answer: string[], extra: FakeBehaviour = {}) {
  return (request: CapturedRequest): FakeBehaviour => (toolResultsIn(request).length === 0 ? { toolCalls: calls, ...extra } : { chunks: answer });
}

forEachDatabase("the agent calls tools during a chat", (h) => {
  let openai: FakeLlmServer;
  let anthropic: FakeLlmServer;
  let receiver: ToolReceiver;
  before(async () => {
    openai = await startFakeOpenAi();
    anthropic = await startFakeAnthropic();
    receiver = await startToolReceiver(SECRET);
  });
  after(async () => {
    await openai.close();
    await anthropic.close();
    await receiver.close();
  });

  async function setup(tools: unknown[], provider: "openai" | "anthropic" = "openai", secret = SECRET) {
    const server = provider === "openai" ? openai : anthropic;
    const { apiKey } = await h().organization({
      agent: { provider, model: "test-model", base_url: server.url, api_key: "vendor-key", tools, tool_secret: secret },
    });
    const threadId = await h().thread(apiKey, { json_input: '{"customer":"Ada"}' });
    return { apiKey, threadId, server };
  }

  function chat(apiKey: string, threadId: string, extra: Record<string, unknown> = {}) {
    return h().request({
      method: "POST",
      url: "/chat",
      headers: { authorization: apiKey },
      payload: { service_config_name: "support", thread_id: threadId, message: "Where is my order A1?", ...extra },
    });
  }

  async function historyReply(apiKey: string, threadId: string): Promise<{ message: string; extras: Record<string, unknown> }> {
    const page = (await h().request({ method: "GET", url: `/threads/${threadId}/messages`, headers: { authorization: apiKey } })).json<{
      messages: { role: string; message: string; extras: Record<string, unknown> }[];
    }>();
    const reply = page.messages.at(-1);
    assert.equal(reply?.role, "assistant");
    return reply;
  }

  for (const provider of ["openai", "anthropic"] as const) {
    for (const whole of [false, true]) {
      test(`${provider}: two tool calls of one round (${whole ? "each sent whole" : "streamed in pieces"}) reach their receivers signed, and the model answers from their results`, async () => {
        const { apiKey, threadId, server } = await setup([tool("get_order", `${receiver.url}/json`), tool("book_visit", `${receiver.url}/text`)], provider);
        server.setBehaviour(oneRound([{ name: "get_order", arguments: { order: "A1" } }, { name: "book_visit", arguments: { order: "B2" } }], ["It shipped", " and you are booked."], { toolCallsWhole: whole }));
        const receivedBefore = receiver.requests.length;
        const modelBefore = server.requests.length;
        const response = await chat(apiKey, threadId);
        assert.equal(response.status, 200, response.body);
        const body = response.json<ChatBody>();
        assert.equal(body.message, "It shipped and you are booked.");

        const received = receiver.requests.slice(receivedBefore);
        assert.deepEqual(received.map((request) => request.path).sort(), ["/json", "/text"]);
        for (const request of received) {
          assert.equal(request.verified, true, "retell-sdk's verify accepts the signature");
          assert.equal(await Retell.verify(request.body, SECRET, String(request.headers["x-parley-signature"])), true);
          assert.equal(await Retell.verify(request.body, OTHER_SECRET, String(request.headers["x-parley-signature"])), false);
          assert.equal(request.headers["content-type"], "application/json");
        }
        const getOrder = received.find((request) => request.path === "/json");
        assert.deepEqual(getOrder?.json, {
          tool: "get_order",
          arguments: { order: "A1" },
          thread_id: threadId,
          conversation_id: body.extras.conversation_id,
          message_id: body.extras.user_message_id,
          call: null,
          context: { customer: "Ada" },
        });

        const calls = body.extras.tool_calls ?? [];
        assert.deepEqual(
          calls.map(({ name, arguments: args, status, result }) => ({ name, args, status, result })),
          [
            { name: "get_order", args: { order: "A1" }, status: "ok", result: { status: "shipped", tool: "get_order" } },
            { name: "book_visit", args: { order: "B2" }, status: "ok", result: "Booked for Tuesday." },
          ],
        );
        for (const call of calls) assert.ok(Number.isInteger(call.duration_ms) && call.duration_ms >= 0);
        const answerRequest = server.requests.slice(modelBefore).at(-1);
        assert.ok(answerRequest);
        assert.deepEqual(toolResultsIn(answerRequest), [JSON.stringify({ status: "shipped", tool: "get_order" }), "Booked for Tuesday."]);

        const stored = await historyReply(apiKey, threadId);
        assert.equal(stored.message, body.message);
        assert.deepEqual(stored.extras["tool_calls"], calls);
        const usage = stored.extras["usage"] as { input_tokens: number; output_tokens: number };
        assert.deepEqual(usage, { input_tokens: 20, output_tokens: 10 }, "usage counts both model requests of the turn");
      });
    }
  }

  test("a failing, a silent and an oversized receiver: the model gets two errors and the first 16 KiB, and the turn goes on", async () => {
    const { apiKey, threadId, server } = await setup([
      tool("fails", `${receiver.url}/fail`),
      tool("hangs", `${receiver.url}/slow`, { timeout_ms: 200 }),
      tool("big", `${receiver.url}/big`),
    ]);
    server.setBehaviour(oneRound([{ name: "fails", arguments: { order: "A1" } }, { name: "hangs", arguments: { order: "A1" } }, { name: "big", arguments: { order: "A1" } }], ["Some of that worked."]));
    const modelBefore = server.requests.length;
    const response = await chat(apiKey, threadId);
    assert.equal(response.status, 200, response.body);
    const [fails, hangs, big] = response.json<ChatBody>().extras.tool_calls ?? [];
    assert.equal(fails?.status, "error");
    assert.deepEqual(fails?.result, { error: "the tool answered with HTTP status 500" });
    assert.equal(hangs?.status, "timeout");
    assert.deepEqual(hangs?.result, { error: "the tool did not answer within 200 ms" });
    assert.equal(big?.status, "ok");
    const expected = `x${"é".repeat(8191)}`;
    assert.equal(big?.result, expected);
    assert.equal(Buffer.byteLength(expected), 16 * 1024 - 1, "cut at 16 KiB, without half a character");
    assert.ok(BIG_ANSWER.startsWith(expected));
    const results = toolResultsIn(server.requests.slice(modelBefore).at(-1)!);
    assert.deepEqual(results, [JSON.stringify({ error: "the tool answered with HTTP status 500" }), JSON.stringify({ error: "the tool did not answer within 200 ms" }), expected]);
    assert.equal(response.json<ChatBody>().message, "Some of that worked.");
  });

  test("arguments that do not match the tool's parameters are not sent: the model gets the validation error", async () => {
    const { apiKey, threadId, server } = await setup([tool("get_order", `${receiver.url}/json`)]);
    server.setBehaviour(oneRound([{ name: "get_order", arguments: { order: "lowercase" } }, { name: "get_order", arguments: "{not json" }], ["Sorry."]));
    const receivedBefore = receiver.requests.length;
    const modelBefore = server.requests.length;
    const response = await chat(apiKey, threadId);
    assert.equal(response.status, 200, response.body);
    assert.equal(receiver.requests.length, receivedBefore, "nothing was sent");
    const [schemaInvalid, unparseable] = response.json<ChatBody>().extras.tool_calls ?? [];
    assert.equal(schemaInvalid?.status, "error");
    assert.deepEqual(schemaInvalid?.arguments, { order: "lowercase" });
    assert.match(JSON.stringify(schemaInvalid?.result), /do not match the tool's parameters: \/order must match pattern/);
    assert.equal(unparseable?.status, "error");
    assert.equal(unparseable?.arguments, "{not json");
    const results = toolResultsIn(server.requests.slice(modelBefore).at(-1)!);
    assert.match(results[0] ?? "", /must match pattern/);
  });

  test("after five rounds of tool calls the model is asked to answer without tools", async () => {
    const { apiKey, threadId, server } = await setup([tool("get_order", `${receiver.url}/json`)]);
    server.setBehaviour((request) =>
      (request.json as { tool_choice?: string }).tool_choice === "none"
        ? { chunks: ["I could not find it."] }
        : { toolCalls: [{ name: "get_order", arguments: { order: `A${toolResultsIn(request).length}` } }] },
    );
    const modelBefore = server.requests.length;
    const receivedBefore = receiver.requests.length;
    const response = await chat(apiKey, threadId);
    assert.equal(response.status, 200, response.body);
    const sent = server.requests.slice(modelBefore);
    assert.equal(sent.length, 6, "five rounds, then the answer");
    assert.deepEqual(sent.map((request) => (request.json as { tool_choice?: string }).tool_choice), ["auto", "auto", "auto", "auto", "auto", "none"]);
    assert.equal(receiver.requests.length - receivedBefore, 5);
    const body = response.json<ChatBody>();
    assert.equal(body.message, "I could not find it.");
    assert.deepEqual(body.extras.tool_calls?.map((call) => (call.arguments as { order: string }).order), ["A0", "A1", "A2", "A3", "A4"]);
  });

  test("a streamed turn keeps its shape: token lines of the answer, then the chat response with the tool calls", async () => {
    const { apiKey, threadId, server } = await setup([tool("get_order", `${receiver.url}/json`)]);
    server.setBehaviour((request) => (toolResultsIn(request).length === 0 ? { chunks: ["Let me check."], toolCalls: [{ name: "get_order", arguments: { order: "A1" } }] } : { chunks: ["It ", "shipped."] }));
    const response = await chat(apiKey, threadId, { streaming: true });
    assert.equal(response.status, 200, response.body);
    const lines = response.body.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    const final = lines.at(-1) as unknown as ChatBody;
    const tokens = lines.slice(0, -1);
    assert.ok(tokens.every((line, index) => Object.keys(line).join() === "token,index" && line["index"] === index));
    assert.equal(tokens.map((line) => line["token"]).join(""), final.message);
    assert.equal(final.message, "Let me check. It shipped.");
    assert.equal(final.extras.tool_calls?.[0]?.name, "get_order");
  });

  test("each call is announced by one tool.called event on the thread's events WebSocket", async () => {
    const { apiKey, threadId, server } = await setup([tool("get_order", `${receiver.url}/json`), tool("book_visit", `${receiver.url}/text`)]);
    server.setBehaviour(oneRound([{ name: "get_order", arguments: { order: "A1" } }, { name: "book_visit", arguments: { order: "B2" } }], ["Done."]));
    const base = await listen(h().app).catch(() => `ws://127.0.0.1:${(h().app.server.server.address() as { port: number }).port}`);
    const socket = await TestSocket.open(`${base}/threads/${threadId}/events?after=0`, { authorization: apiKey });
    try {
      const body = (await chat(apiKey, threadId)).json<ChatBody>();
      await socket.next((event) => event["type"] === "message.created" && (event["message"] as { role: string }).role === "assistant");
      const toolEvents = socket.received.filter((event) => event["type"] === "tool.called");
      assert.equal(toolEvents.length, 2);
      for (const event of toolEvents) {
        assert.equal(event["reply_message_id"], body.extras.reply_message_id);
        assert.equal(event["message_id"], body.extras.user_message_id);
        assert.equal(event["conversation_id"], body.extras.conversation_id);
      }
      const announced = toolEvents.map((event) => event["tool_call"] as ToolCallView).sort((a, b) => a.name.localeCompare(b.name));
      assert.deepEqual(announced, [...(body.extras.tool_calls ?? [])].sort((a, b) => a.name.localeCompare(b.name)));
    } finally {
      socket.close();
    }
  });

  test("another organization's receiver is never called with this organization's secret", async () => {
    const otherReceiver = await startToolReceiver(OTHER_SECRET);
    try {
      const mine = await setup([tool("get_order", `${receiver.url}/json`)]);
      const theirs = await setup([tool("get_order", `${otherReceiver.url}/json`)], "openai", OTHER_SECRET);
      openai.setBehaviour(oneRound([{ name: "get_order", arguments: { order: "A1" } }], ["ok"]));
      const mineBefore = receiver.requests.length;
      assert.equal((await chat(mine.apiKey, mine.threadId)).status, 200);
      assert.equal((await chat(theirs.apiKey, theirs.threadId)).status, 200);
      assert.deepEqual(receiver.requests.slice(mineBefore).map((request) => [request.json["thread_id"], request.verified]), [[mine.threadId, true]]);
      assert.deepEqual(otherReceiver.requests.map((request) => [request.json["thread_id"], request.verified]), [[theirs.threadId, true]]);
      const theirSignature = String(otherReceiver.requests[0]?.headers["x-parley-signature"]);
      assert.equal(await Retell.verify(otherReceiver.requests[0]!.body, SECRET, theirSignature), false);
    } finally {
      await otherReceiver.close();
    }
  });

  test("the built-in agent calls no http tools", async () => {
    const { apiKey } = await h().organization({ agent: { tools: [tool("get_order", `${receiver.url}/json`)], tool_secret: SECRET } });
    const threadId = await h().thread(apiKey);
    const before = receiver.requests.length;
    const response = await chat(apiKey, threadId);
    assert.equal(response.status, 200);
    assert.equal(response.json<ChatBody>().extras.tool_calls, undefined);
    assert.equal(receiver.requests.length, before);
  });
});

forEachDatabase(
  "tool receivers on internal addresses",
  (h) => {
    let openai: FakeLlmServer;
    let receiver: ToolReceiver;
    before(async () => {
      openai = await startFakeOpenAi();
      receiver = await startToolReceiver(SECRET);
    });
    after(async () => {
      await openai.close();
      await receiver.close();
    });

    test("are refused unless TOOLS_ALLOW_PRIVATE_NETWORKS is set, by address or by a name that resolves to one", async () => {
      const port = new URL(receiver.url).port;
      const { apiKey } = await h().organization({
        agent: {
          provider: "openai",
          base_url: openai.url,
          tools: [tool("by_address", `${receiver.url}/json`), tool("by_name", `http://localhost:${port}/json`)],
          tool_secret: SECRET,
        },
      });
      const threadId = await h().thread(apiKey);
      openai.setBehaviour(oneRound([{ name: "by_address", arguments: { order: "A1" } }, { name: "by_name", arguments: { order: "A1" } }], ["Sorry."]));
      const response = await h().request({ method: "POST", url: "/chat", headers: { authorization: apiKey }, payload: { service_config_name: "support", thread_id: threadId, message: "hi" } });
      assert.equal(response.status, 200, response.body);
      const calls = response.json<ChatBody>().extras.tool_calls ?? [];
      assert.deepEqual(calls.map((call) => call.status), ["error", "error"]);
      for (const call of calls) assert.match(JSON.stringify(call.result), /address is refused.*internal address/);
      assert.equal(receiver.requests.length, 0);
    });
  },
  { env: { TOOLS_ALLOW_PRIVATE_NETWORKS: "false" } },
);

forEachDatabase("agent.tools in the project configuration", (h) => {
  async function publish(agent: Record<string, unknown>) {
    const { organizationId } = await h().organization();
    return h().admin("POST", `/admin/organizations/${organizationId}/projects`, { name: "tools", config: { agent } });
  }

  const url = "https://tools.example.com/book";
  const good = { name: "book", url };
  const cases: { title: string; agent: Record<string, unknown>; detail: unknown[] }[] = [
    {
      title: "a name with a space",
      agent: { tools: [{ ...good, name: "book it" }], tool_secret: SECRET },
      detail: [{ type: "string_pattern_mismatch", loc: ["body", "config", "agent", "tools", 0, "name"], msg: "String should match pattern '^[A-Za-z0-9_-]{1,64}$'", input: "book it", ctx: { pattern: "^[A-Za-z0-9_-]{1,64}$" } }],
    },
    {
      title: "a name used twice",
      agent: { tools: [good, { ...good }], tool_secret: SECRET },
      detail: [{ type: "value_error", loc: ["body", "config", "agent", "tools", 1, "name"], msg: "Value error, tool name 'book' is used by an earlier tool", input: "book", ctx: { error: {} } }],
    },
    {
      title: "an http tool without url",
      agent: { tools: [{ name: "book" }], tool_secret: SECRET },
      detail: [{ type: "missing", loc: ["body", "config", "agent", "tools", 0, "url"], msg: "Field required", input: { name: "book" } }],
    },
    {
      title: "a url that is not absolute http(s)",
      agent: { tools: [{ ...good, url: "ftp://tools.example.com/book" }], tool_secret: SECRET },
      detail: [{ type: "value_error", loc: ["body", "config", "agent", "tools", 0, "url"], msg: "Value error, must be an absolute http or https URL", input: "ftp://tools.example.com/book", ctx: { error: {} } }],
    },
    {
      title: "parameters that are not an object schema",
      agent: { tools: [{ ...good, parameters: { type: "string" } }], tool_secret: SECRET },
      detail: [{ type: "value_error", loc: ["body", "config", "agent", "tools", 0, "parameters"], msg: 'Value error, must be a JSON Schema with "type": "object"', input: { type: "string" }, ctx: { error: {} } }],
    },
    {
      title: "parameters that are not a valid JSON Schema",
      agent: { tools: [{ ...good, parameters: { type: "object", properties: { day: { type: "weekday" } } } }], tool_secret: SECRET },
      detail: [{ type: "value_error", loc: ["body", "config", "agent", "tools", 0, "parameters"] }],
    },
    {
      title: "a timeout below 100 ms",
      agent: { tools: [{ ...good, timeout_ms: 50 }], tool_secret: SECRET },
      detail: [{ type: "greater_than_equal", loc: ["body", "config", "agent", "tools", 0, "timeout_ms"], msg: "Input should be greater than or equal to 100", input: 50, ctx: { ge: 100 } }],
    },
    {
      title: "a timeout above 60 s",
      agent: { tools: [{ ...good, timeout_ms: 60_001 }], tool_secret: SECRET },
      detail: [{ type: "less_than_equal", loc: ["body", "config", "agent", "tools", 0, "timeout_ms"], msg: "Input should be less than or equal to 60000", input: 60_001, ctx: { le: 60_000 } }],
    },
    {
      title: "an unknown type",
      agent: { tools: [{ ...good, type: "sql" }], tool_secret: SECRET },
      detail: [{ type: "literal_error", loc: ["body", "config", "agent", "tools", 0, "type"], msg: "Input should be 'http', 'end_call' or 'transfer_call'", input: "sql", ctx: { expected: "'http', 'end_call' or 'transfer_call'" } }],
    },
    {
      title: "a transfer without a number",
      agent: { tools: [{ name: "desk", type: "transfer_call" }] },
      detail: [{ type: "missing", loc: ["body", "config", "agent", "tools", 0, "number"], msg: "Field required", input: { name: "desk", type: "transfer_call" } }],
    },
    {
      title: "a transfer to something that is not a phone number",
      agent: { tools: [{ name: "desk", type: "transfer_call", number: "+1 555" }] },
      detail: [{ type: "value_error", loc: ["body", "config", "agent", "tools", 0, "number"], msg: "Value error, not a valid phone number (E.164, e.g. +14155550199)", input: "+1 555", ctx: { error: {} } }],
    },
    {
      title: "more than 32 tools",
      agent: { tools: Array.from({ length: 33 }, (_, index) => ({ name: `t${index}`, type: "end_call" })) },
      detail: [{ type: "too_long", loc: ["body", "config", "agent", "tools"] }],
    },
    {
      title: "a tool secret shorter than 16 characters",
      agent: { tools: [good], tool_secret: "short" },
      detail: [{ type: "string_too_short", loc: ["body", "config", "agent", "tool_secret"], msg: "String should have at least 16 characters", input: "short", ctx: { min_length: 16 } }],
    },
    {
      title: "an http tool without a tool secret",
      agent: { tools: [good] },
      detail: [{ type: "value_error", loc: ["body", "config", "agent", "tool_secret"], msg: "Value error, required when an http tool is configured (16+ characters)", input: null, ctx: { error: {} } }],
    },
  ];
  for (const { title, agent, detail } of cases) {
    test(`422 for ${title}, at its place`, async () => {
      const response = await publish(agent);
      assert.equal(response.status, 422, response.body);
      const issues = response.json<{ detail: Record<string, unknown>[] }>().detail;
      assert.equal(issues.length, detail.length, response.body);
      detail.forEach((expected, index) => {
        const actual = issues[index] ?? {};
        assert.deepEqual(Object.fromEntries(Object.keys(expected as object).map((key) => [key, actual[key]])), expected);
      });
    });
  }

  test("the tool secret is write-only, encrypted at rest, and kept by a version that leaves it out", async () => {
    const { organizationId } = await h().organization();
    const created = await h().admin("POST", `/admin/organizations/${organizationId}/projects`, {
      name: "tools",
      config: { agent: { tools: [good, { name: "hang_up", type: "end_call" }, { name: "desk", type: "transfer_call", number: "+1 415 555 0199" }], tool_secret: SECRET } },
    });
    assert.equal(created.status, 201, created.body);
    const projectId = created.json<{ id: string }>().id;
    const republished = await h().admin("PUT", `/admin/projects/${projectId}/config`, { config: { agent: { tools: [good] } } });
    assert.equal(republished.status, 201, republished.body);
    const view = await h().admin("GET", `/admin/projects/${projectId}`);
    assert.doesNotMatch(view.body, new RegExp(SECRET));
    const agent = view.json<{ config: { agent: { tools: unknown[]; tool_secret_set: boolean } } }>().config.agent;
    assert.equal(agent.tool_secret_set, true);
    assert.deepEqual(agent.tools, [{ name: "book", description: "", parameters: { type: "object", properties: {} }, speak_during_execution: "", type: "http", url, timeout_ms: 10_000 }]);
    const rows = await h().database.db.query<{ config: unknown; encrypted_secrets: string | null }>("SELECT config, encrypted_secrets FROM project_config_versions WHERE project_id = $1", [projectId]);
    assert.equal(rows.length, 2);
    for (const row of rows) {
      assert.doesNotMatch(JSON.stringify(row), new RegExp(SECRET));
      assert.ok(row.encrypted_secrets);
    }
  });

  test("a transfer number is stored in E.164", async () => {
    const { organizationId } = await h().organization();
    const created = await h().admin("POST", `/admin/organizations/${organizationId}/projects`, {
      name: "tools",
      config: { agent: { tools: [{ name: "desk", type: "transfer_call", number: "+1 (415) 555-0199" }] } },
    });
    assert.equal(created.status, 201, created.body);
    const view = await h().admin("GET", `/admin/projects/${created.json<{ id: string }>().id}`);
    const tools = view.json<{ config: { agent: { tools: { number?: string }[] } } }>().config.agent.tools;
    assert.equal(tools[0]?.number, "+14155550199");
  });
});
