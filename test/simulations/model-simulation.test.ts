import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { startFakeAnthropic, startFakeOpenAi, type CapturedRequest, type FakeBehaviour, type FakeLlmServer } from "../support/fake-llm-servers.js";
import { forEachDatabase } from "../support/harness.js";
import { historyOf, simulate, type SimulationBody } from "./support.js";

interface OpenAiBody {
  messages: { role: string; content: string }[];
  response_format?: { type: string; json_schema: { name: string; strict: boolean; schema: { properties: { criteria: { required: string[] } } } } };
}

interface AnthropicBody {
  system?: string;
  messages: { role: string; content: string }[];
  tools?: { name: string; input_schema: { properties: { criteria: { required: string[] } } } }[];
  tool_choice?: { type: string; name: string };
}

const persona = {
  agent_type: "front-desk receptionist",
  industry: "veterinary clinic",
  topic: "vaccinating a new puppy",
  behavioural_prompt: "Anxious first-time dog owner who asks about side effects.",
};

function systemOf(request: CapturedRequest): string {
  const body = request.json as OpenAiBody & AnthropicBody;
  return body.system ?? body.messages.find((message) => message.role === "system")?.content ?? "";
}

function isSimulatedUser(request: CapturedRequest): boolean {
  return systemOf(request).includes("role-playing a human user");
}

function isJudge(request: CapturedRequest): boolean {
  const body = request.json as OpenAiBody & AnthropicBody;
  return body.response_format !== undefined || body.tool_choice !== undefined;
}

/** The judge's JSON for the criteria the request's schema requires: each passes except the keys in `failing`. */
function judgeAnswer(request: CapturedRequest, failing: string[] = []): FakeBehaviour {
  const body = request.json as OpenAiBody & AnthropicBody;
  const keys = body.response_format?.json_schema.schema.properties.criteria.required ?? body.tools![0]!.input_schema.properties.criteria.required;
  const criteria = Object.fromEntries(
    keys.map((key) => [key, { passed: !failing.includes(key), score: failing.includes(key) ? 0.2 : 0.9, reasoning: `Judged ${key} on the transcript.` }]),
  );
  const json = JSON.stringify({ criteria });
  // Streamed in pieces that cut through keys and values, as vendors do.
  return { chunks: [json.slice(0, 7), json.slice(7, 40), json.slice(40)] };
}

/** A scripted user: asks two things, then says goodbye with the end marker, streamed across chunks. */
function simulatedUserAnswer(request: CapturedRequest): FakeBehaviour {
  // From the simulated user's side, its own earlier turns are the "assistant" messages.
  const said = (request.json as { messages: { role: string; content: string }[] }).messages.filter((message) => message.role === "assistant").map((message) => message.content);
  if (!said.includes("Are there side effects?")) return { chunks: ["Are there ", "side effects?"] };
  if (!said.includes("How soon can we come in?")) return { chunks: ["How soon ", "can we come in?"] };
  return { chunks: ["Thank you, ", "that's all. [E", "ND]"] };
}

forEachDatabase("simulations with model providers on loopback servers", (h) => {
  let openai: FakeLlmServer;
  let anthropic: FakeLlmServer;
  before(async () => {
    openai = await startFakeOpenAi();
    anthropic = await startFakeAnthropic();
  });
  after(async () => {
    await openai.close();
    await anthropic.close();
  });

  async function project(config: Record<string, unknown>) {
    const { apiKey } = await h().organization({
      agent: { provider: "openai", model: "agent-model", base_url: openai.url, api_key: "agent-key", system_prompt: "You are the front desk of Paws Clinic. Greet {{name}}." },
      pricing: { message_usd: 0.01 },
      ...config,
    });
    const threadId = await h().thread(apiKey, { timezone: "America/Chicago", json_input: '{"name":"Ada"}' });
    return { apiKey, threadId };
  }

  test("the project's model plays the persona, the agent gets the project's prompt, and the judge sees the whole transcript and every criterion", async () => {
    const { apiKey, threadId } = await project({
      simulation: { criteria: [{ key: "mentions_booster", description: "The agent explains when the booster shot is due.", required: false }] },
    });
    let agentReplies = 0;
    openai.setBehaviour((request) => {
      if (isJudge(request)) return judgeAnswer(request, ["mentions_booster"]);
      if (isSimulatedUser(request)) return simulatedUserAnswer(request);
      agentReplies += 1;
      return { chunks: ["Agent reply ", String(agentReplies), "."] };
    });
    const first = openai.requests.length;
    const response = await simulate(h(), apiKey, {
      thread_id: threadId,
      message: "Hello, my puppy needs shots.",
      simulate: { ...persona, initial_messages: ["What vaccines does she need?"], max_turns: 10, evaluate: true },
    });
    assert.equal(response.status, 200, response.body);
    const simulation = response.json<SimulationBody>().extras.simulation;
    assert.deepEqual(
      simulation.turns.map((turn) => [turn.source, turn.message]),
      [
        ["message", "Hello, my puppy needs shots."],
        ["agent", "Agent reply 1."],
        ["scripted", "What vaccines does she need?"],
        ["agent", "Agent reply 2."],
        ["simulated", "Are there side effects?"],
        ["agent", "Agent reply 3."],
        ["simulated", "How soon can we come in?"],
        ["agent", "Agent reply 4."],
        ["simulated", "Thank you, that's all."],
        ["agent", "Agent reply 5."],
      ],
    );
    assert.equal(simulation.stop_reason, "user_ended");

    const requests = openai.requests.slice(first);
    const agentRequests = requests.filter((request) => !isSimulatedUser(request) && !isJudge(request));
    const userRequests = requests.filter(isSimulatedUser);
    const judgeRequests = requests.filter(isJudge);
    assert.deepEqual([agentRequests.length, userRequests.length, judgeRequests.length], [5, 3, 1]);

    for (const request of userRequests) {
      const system = systemOf(request);
      for (const field of Object.values(persona)) assert.ok(system.includes(field), `the simulated user's prompt holds "${field}"`);
      assert.equal(request.headers.authorization, "Bearer agent-key", "without simulation.provider the agent's own model plays the user");
    }
    const lastUser = (userRequests.at(-1)!.json as OpenAiBody).messages.slice(1);
    assert.deepEqual(
      lastUser.map((message) => [message.role, message.content]),
      simulation.turns.slice(0, 8).map((turn) => [turn.role === "user" ? "assistant" : "user", turn.message]),
      "the simulated user sees the conversation from its side",
    );

    for (const request of agentRequests) {
      const [system, ...conversation] = (request.json as OpenAiBody).messages;
      assert.equal(system!.role, "system");
      assert.match(system!.content, /^You are the front desk of Paws Clinic\. Greet Ada\.\n\nThe user's timezone is America\/Chicago/);
      assert.doesNotMatch(system!.content, /role-playing|veterinary|puppy/, "nothing of the persona reaches the agent");
      assert.equal(conversation.at(-1)!.role, "user");
    }
    const lastAgent = (agentRequests.at(-1)!.json as OpenAiBody).messages.slice(1);
    assert.deepEqual(lastAgent.map((message) => message.content), simulation.turns.slice(0, 9).map((turn) => turn.message));

    const judge = judgeRequests[0]!.json as OpenAiBody;
    assert.equal(judge.response_format!.type, "json_schema");
    assert.equal(judge.response_format!.json_schema.strict, true);
    assert.deepEqual(judge.response_format!.json_schema.schema.properties.criteria.required, ["task_completion", "stays_on_topic", "no_repetition", "mentions_booster"]);
    const judgePrompt = judge.messages.map((message) => message.content).join("\n");
    for (const turn of simulation.turns) assert.ok(judgePrompt.includes(turn.message), `the judge sees "${turn.message}"`);
    assert.ok(judgePrompt.includes("The agent explains when the booster shot is due."));
    assert.ok(judgePrompt.includes("task_completion") && judgePrompt.includes("no_repetition"));

    const evaluation = simulation.evaluation!;
    assert.equal(evaluation.judge, "llm");
    assert.equal(evaluation.verdict, "pass", "the failing criterion is not required");
    assert.deepEqual(evaluation.criteria.map((criterion) => [criterion.key, criterion.passed, criterion.score]), [
      ["task_completion", true, 0.9],
      ["stays_on_topic", true, 0.9],
      ["no_repetition", true, 0.9],
      ["mentions_booster", false, 0.2],
    ]);
    assert.equal(evaluation.score, 0.725);
  });

  test("simulation.provider sends the simulated user and the judge to another vendor with its own key; the agent stays on the project's", async () => {
    const { apiKey, threadId } = await project({
      simulation: { provider: "anthropic", model: "judge-model", base_url: anthropic.url, api_key: "simulation-key" },
    });
    openai.setBehaviour({ chunks: ["We can help with that", "."] });
    anthropic.setBehaviour((request) => (isJudge(request) ? judgeAnswer(request, ["no_repetition"]) : simulatedUserAnswer(request)));
    const firstOpenAi = openai.requests.length;
    const firstAnthropic = anthropic.requests.length;
    const response = await simulate(h(), apiKey, {
      thread_id: threadId,
      message: "Hello, my puppy needs shots.",
      streaming: true,
      simulate: { ...persona, max_turns: 3, evaluate: true, create: true },
    });
    const lines = response.body.trim().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>);
    const final = lines.pop() as unknown as SimulationBody;
    const simulation = final.extras.simulation;
    assert.equal(simulation.stop_reason, "max_turns");
    assert.deepEqual(simulation.turns.filter((turn) => turn.source === "simulated").map((turn) => turn.message), ["Are there side effects?", "How soon can we come in?"]);
    assert.equal(lines.map((line) => line["token"]).join(""), simulation.turns.map((turn) => turn.message).join(""));

    const vendorRequests = anthropic.requests.slice(firstAnthropic);
    assert.equal(vendorRequests.length, 3);
    assert.ok(vendorRequests.every((request) => request.headers["x-api-key"] === "simulation-key" && (request.json as { model: string }).model === "judge-model"));
    const judge = vendorRequests.find(isJudge)!.json as AnthropicBody;
    assert.deepEqual(judge.tool_choice, { type: "tool", name: "conversation_evaluation" });
    assert.match(judge.system!, /task_completion/);
    const agentRequests = openai.requests.slice(firstOpenAi);
    assert.equal(agentRequests.length, 3);
    assert.ok(agentRequests.every((request) => request.headers.authorization === "Bearer agent-key" && !isSimulatedUser(request)));

    assert.equal(simulation.evaluation!.judge, "llm");
    assert.equal(simulation.evaluation!.verdict, "fail");
    const stored = await h().request({ method: "GET", url: `/simulations/${simulation.id}`, headers: { authorization: apiKey } });
    assert.deepEqual(stored.json<{ evaluation: unknown }>().evaluation, simulation.evaluation);
    assert.deepEqual((await historyOf(h(), apiKey, simulation.thread_id!)).map((message) => message.message), simulation.turns.map((turn) => turn.message));
  });

  test("a judge that ignores response_format and answers free text, twice, gives way to the heuristic judge with a note: 200, the run stored", async () => {
    const { apiKey, threadId } = await project({});
    // As many OpenAI-compatible servers do: `response_format` is not understood, and the model just talks.
    openai.setBehaviour((request) =>
      isJudge(request) ? { chunks: ["The agent was ", "helpful and polite throughout."] } : isSimulatedUser(request) ? simulatedUserAnswer(request) : { chunks: ["Sure."] },
    );
    const before = openai.requests.length;
    const response = await simulate(h(), apiKey, { thread_id: threadId, message: "Hi", simulate: { max_turns: 2, evaluate: true, create: true } });
    assert.equal(response.status, 200, response.body);
    const { simulation } = response.json<SimulationBody>().extras;
    const evaluation = simulation.evaluation!;
    assert.equal(evaluation.judge, "heuristic");
    assert.match(evaluation.note ?? "", /judge/);
    assert.deepEqual(evaluation.criteria.map((criterion) => criterion.key), ["task_completion", "stays_on_topic", "no_repetition"]);
    assert.equal(openai.requests.slice(before).filter(isJudge).length, 2, "the judge is asked once more before it is given up");
    const stored = await h().request({ method: "GET", url: `/simulations/${simulation.id}`, headers: { authorization: apiKey } });
    assert.equal(stored.status, 200);
    assert.deepEqual(stored.json<{ evaluation: unknown; turns: unknown[] }>().evaluation, evaluation);
    assert.equal(stored.json<{ turns: unknown[] }>().turns.length, 4);
  });

  test("a judge whose first answer breaks the schema and whose second keeps it is the model's judgement", async () => {
    const { apiKey, threadId } = await project({});
    let judged = 0;
    openai.setBehaviour((request) => {
      if (!isJudge(request)) return isSimulatedUser(request) ? simulatedUserAnswer(request) : { chunks: ["Sure."] };
      judged += 1;
      return judged === 1 ? { chunks: ['{"criteria": {"task_completion": "good"}}'] } : judgeAnswer(request);
    });
    const response = await simulate(h(), apiKey, { thread_id: threadId, message: "Hi", simulate: { max_turns: 2, evaluate: true } });
    assert.equal(response.status, 200, response.body);
    const evaluation = response.json<SimulationBody>().extras.simulation.evaluation!;
    assert.deepEqual([evaluation.judge, evaluation.note, judged], ["llm", undefined, 2]);
  });

  test("a model that fails mid-simulation is a 502 in a plain response and an error line in a stream", async () => {
    const { apiKey, threadId } = await project({});
    openai.setBehaviour((request) => (isSimulatedUser(request) ? { status: 400, errorMessage: "bad request" } : { chunks: ["Sure."] }));
    const plain = await simulate(h(), apiKey, { thread_id: threadId, message: "Hi", simulate: { max_turns: 3 } });
    assert.equal(plain.status, 502);
    const streamed = await simulate(h(), apiKey, { thread_id: threadId, message: "Hi", streaming: true, simulate: { max_turns: 3 } });
    const last = JSON.parse(streamed.body.trim().split("\n").at(-1)!) as { error: string; status_code: number };
    assert.equal(last.status_code, 502);
  });
});
