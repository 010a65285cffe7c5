import assert from "node:assert/strict";
import { test } from "node:test";
import type { Harness } from "../support/harness.js";
import { forEachDatabase } from "../support/harness.js";
import { clinicConfig, historyOf, simulate, usageOf, type SimulationBody } from "./support.js";

const persona = { topic: "booking a cleaning", industry: "dental care", agent_type: "receptionist" };
const opening = "Hi, I'd like to get my teeth cleaned.";

/** What an organization has stored: its threads, their messages and events, and its simulation runs. */
async function storedRows(h: Harness, organizationId: string): Promise<Record<string, number>> {
  const [row] = await h.database.db.query<Record<string, number>>(
    `SELECT (SELECT count(*)::int FROM threads WHERE organization_id = $1) AS threads,
            (SELECT count(*)::int FROM messages m JOIN threads t ON t.id = m.thread_id WHERE t.organization_id = $1) AS messages,
            (SELECT count(*)::int FROM conversations c JOIN threads t ON t.id = c.thread_id WHERE t.organization_id = $1) AS conversations,
            (SELECT count(*)::int FROM thread_events e JOIN threads t ON t.id = e.thread_id WHERE t.organization_id = $1) AS events,
            (SELECT count(*)::int FROM simulations WHERE organization_id = $1) AS simulations,
            (SELECT coalesce(sum(billable_messages), 0)::int FROM threads WHERE organization_id = $1) AS billed`,
    [organizationId],
  );
  return row!;
}

forEachDatabase("simulations with the built-in agent and persona", (h) => {
  test("a dry run plays the message, the scripted turns and a varied simulated user, and writes nothing anywhere", async () => {
    const { organizationId, apiKey } = await h().organization(clinicConfig);
    const threadId = await h().thread(apiKey, { timezone: "Europe/Paris" });
    const before = await storedRows(h(), organizationId);
    const response = await simulate(h(), apiKey, {
      thread_id: threadId,
      message: opening,
      simulate: { ...persona, initial_messages: ["Do you accept insurance?"], max_turns: 6 },
    });
    assert.equal(response.status, 200, response.body);
    const body = response.json<SimulationBody>();
    const { turns } = body.extras.simulation;
    assert.deepEqual(turns.slice(0, 4).map((turn) => [turn.role, turn.source]), [
      ["user", "message"],
      ["assistant", "agent"],
      ["user", "scripted"],
      ["assistant", "agent"],
    ]);
    assert.equal(turns[0]!.message, opening);
    assert.equal(turns[2]!.message, "Do you accept insurance?");
    assert.equal(turns[3]!.message, "We accept Delta Dental, Cigna and Aetna insurance plans.");
    const userTurns = turns.filter((turn) => turn.role === "user");
    assert.equal(userTurns.length, 6, "max_turns user turns, scripted ones included");
    assert.ok(userTurns.slice(2).every((turn) => turn.source === "simulated"));
    assert.equal(new Set(userTurns.map((turn) => turn.message)).size, userTurns.length, "the simulated user never says the same thing twice");
    const agentTurns = turns.filter((turn) => turn.role === "assistant");
    assert.ok(new Set(agentTurns.map((turn) => turn.message)).size >= 4, "the agent is asked different things and answers differently");
    assert.ok(turns.every((turn, index) => turn.role === (index % 2 === 0 ? "user" : "assistant")));
    assert.equal(body.extras.simulation.stop_reason, "max_turns");
    assert.equal(body.message, agentTurns.at(-1)!.message);
    assert.deepEqual([body.extras.user_message_id, body.extras.conversation_id, body.extras.reply_message_id, body.extras.simulation.thread_id], [null, null, null, null]);
    assert.equal(body.extras.simulation.evaluation, undefined);

    assert.deepEqual(await storedRows(h(), organizationId), before);
    assert.deepEqual(await historyOf(h(), apiKey, threadId), []);
    const reread = await h().request({ method: "GET", url: `/simulations/${body.extras.simulation.id}`, headers: { authorization: apiKey } });
    assert.equal(reread.status, 404);
  });

  test("the built-in persona is deterministic, varies with its fields, and ends the conversation when it has asked everything", async () => {
    const { apiKey } = await h().organization(clinicConfig);
    const threadId = await h().thread(apiKey);
    const run = async (simulateFields: Record<string, unknown>) => {
      const response = await simulate(h(), apiKey, { thread_id: threadId, message: opening, simulate: { ...persona, max_turns: 50, ...simulateFields } });
      assert.equal(response.status, 200, response.body);
      return response.json<SimulationBody>().extras.simulation;
    };
    const first = await run({});
    assert.deepEqual((await run({})).turns, first.turns, "the same persona replays the same conversation");
    assert.equal(first.stop_reason, "user_ended", "it says goodbye instead of looping up to max_turns");
    assert.ok(first.turns.length < 40);
    assert.match(first.turns.filter((turn) => turn.role === "user").at(-1)!.message, /bye/i);

    const impatient = await run({ behavioural_prompt: "Impatient and in a hurry." });
    const skeptical = await run({ behavioural_prompt: "Skeptical of everything the agent says." });
    const userLines = (turns: typeof first.turns) => turns.filter((turn) => turn.source === "simulated").map((turn) => turn.message);
    assert.notDeepEqual(userLines(impatient.turns), userLines(first.turns));
    assert.notDeepEqual(userLines(skeptical.turns), userLines(first.turns));
    assert.ok(userLines(skeptical.turns).includes("Are you sure about that? How do you know?"));
    assert.ok(userLines(impatient.turns).every((line) => line.length <= userLines(first.turns).reduce((max, other) => Math.max(max, other.length), 0)));
  });

  test("a persona facing an agent that never answers gives up, and the heuristic judge fails the agent", async () => {
    const { apiKey } = await h().organization({ agent: { provider: "builtin", greeting: "Hello.", fallback: "Sorry, I cannot help with that." } });
    const threadId = await h().thread(apiKey);
    const response = await simulate(h(), apiKey, { thread_id: threadId, message: opening, simulate: { ...persona, max_turns: 10, evaluate: true } });
    const { turns, stop_reason, evaluation } = response.json<SimulationBody>().extras.simulation;
    assert.equal(stop_reason, "user_ended");
    assert.ok(turns.length < 20);
    assert.equal(evaluation!.judge, "heuristic");
    assert.equal(evaluation!.verdict, "fail");
    const byKey = Object.fromEntries(evaluation!.criteria.map((criterion) => [criterion.key, criterion]));
    assert.deepEqual(Object.keys(byKey), ["task_completion", "stays_on_topic", "no_repetition"]);
    assert.equal(byKey["task_completion"]!.passed, false);
    assert.equal(byKey["no_repetition"]!.passed, false);
    assert.match(byKey["no_repetition"]!.reasoning, /Sorry, I cannot help with that/);
  });

  test("the heuristic judge names the topic it was given, and without one says that it compared with the opening message", async () => {
    const { apiKey } = await h().organization(clinicConfig);
    const threadId = await h().thread(apiKey);
    const reasoningOf = async (simulate_: Record<string, unknown>) => {
      const response = await simulate(h(), apiKey, { thread_id: threadId, message: "Hi, I have a question.", simulate: { max_turns: 2, evaluate: true, ...simulate_ } });
      assert.equal(response.status, 200, response.body);
      return response.json<SimulationBody>().extras.simulation.evaluation!.criteria.find((criterion) => criterion.key === "stays_on_topic")!.reasoning;
    };
    assert.match(await reasoningOf({ topic: "booking a cleaning" }), /share words with the topic \("booking a cleaning"\) or with the question/);
    const untopical = await reasoningOf({});
    assert.doesNotMatch(untopical, /the topic/);
    assert.match(untopical, /share words with the opening message \("Hi, I have a question\."; no topic was given\) or with the question/);
  });

  test("evaluation with the heuristic judge adds the project's criteria and passes an agent that answers", async () => {
    const { apiKey } = await h().organization({
      ...clinicConfig,
      simulation: {
        criteria: [
          { key: "mentions_price", description: "The agent tells the price of a cleaning in dollars.", required: true },
          { key: "mentions_parking", description: "The agent explains parking garage validation.", required: false },
        ],
      },
    });
    const threadId = await h().thread(apiKey);
    const response = await simulate(h(), apiKey, {
      thread_id: threadId,
      message: "How much does a cleaning cost?",
      simulate: { ...persona, initial_messages: ["Do you accept insurance?", "How do I book a cleaning appointment?"], max_turns: 3, evaluate: true },
    });
    const evaluation = response.json<SimulationBody>().extras.simulation.evaluation!;
    const byKey = Object.fromEntries(evaluation.criteria.map((criterion) => [criterion.key, criterion]));
    assert.deepEqual(Object.keys(byKey), ["task_completion", "stays_on_topic", "no_repetition", "mentions_price", "mentions_parking"]);
    assert.equal(byKey["task_completion"]!.score, 1);
    assert.equal(byKey["no_repetition"]!.passed, true);
    assert.equal(byKey["mentions_price"]!.passed, true);
    assert.equal(byKey["mentions_parking"]!.passed, false);
    assert.equal(evaluation.verdict, "pass", "only a required criterion that fails fails the verdict");
    const mean = evaluation.criteria.reduce((sum, criterion) => sum + criterion.score, 0) / evaluation.criteria.length;
    assert.ok(Math.abs(evaluation.score - mean) < 0.001);
    for (const criterion of evaluation.criteria) assert.ok(criterion.reasoning.length > 10);
  });

  test("create stores a SIMULATION thread whose history is the returned turns, billed there and not on the source thread", async () => {
    const { organizationId, apiKey } = await h().organization(clinicConfig);
    const threadId = await h().thread(apiKey, { timezone: "Asia/Tokyo", json_input: '{"name":"Ada"}' });
    const response = await simulate(h(), apiKey, { thread_id: threadId, message: opening, simulate: { ...persona, max_turns: 4, create: true, evaluate: true } });
    assert.equal(response.status, 200, response.body);
    const body = response.json<SimulationBody>();
    const simulation = body.extras.simulation;
    assert.ok(simulation.thread_id);
    assert.notEqual(simulation.thread_id, threadId);

    const history = await historyOf(h(), apiKey, simulation.thread_id);
    assert.deepEqual(
      history.map((message) => [message.role, message.message]),
      simulation.turns.map((turn) => [turn.role, turn.message]),
    );
    assert.deepEqual(
      history.filter((message) => message.role === "user").map((message) => message.extras["source"]),
      simulation.turns.filter((turn) => turn.role === "user").map((turn) => turn.source),
    );
    const [stored] = await h().database.db.query<{ type: string; timezone: string; context: unknown; organization_id: string }>(
      "SELECT type, timezone, context, organization_id FROM threads WHERE id = $1",
      [simulation.thread_id],
    );
    assert.deepEqual(stored, { type: "SIMULATION", timezone: "Asia/Tokyo", context: { name: "Ada" }, organization_id: organizationId });
    assert.ok(body.extras.reply_message_id && body.extras.user_message_id);
    assert.equal(body.extras.conversation_id, 1);

    const agentTurns = simulation.turns.filter((turn) => turn.role === "assistant").length;
    const usage = await usageOf(h(), apiKey, simulation.thread_id);
    assert.deepEqual([usage.billable_messages, usage.billable_message_cost], [agentTurns, Math.round(agentTurns * 0.01 * 1e8) / 1e8]);
    assert.equal((await usageOf(h(), apiKey, threadId)).billable_messages, 0);
    assert.deepEqual(await historyOf(h(), apiKey, threadId), []);

    const reread = await h().request({ method: "GET", url: `/simulations/${simulation.id}`, headers: { authorization: apiKey } });
    assert.equal(reread.status, 200);
    const run = reread.json<Record<string, unknown>>();
    assert.deepEqual(
      { id: run["id"], thread_id: run["thread_id"], turns: run["turns"], stop_reason: run["stop_reason"], evaluation: run["evaluation"] },
      simulation,
    );
    assert.equal(run["source_thread_id"], threadId);
    assert.equal(run["project_name"], "support");
    assert.deepEqual(run["simulate"], {
      initial_messages: [],
      max_turns: 4,
      agent_type: "receptionist",
      industry: "dental care",
      topic: "booking a cleaning",
      behavioural_prompt: null,
      create: true,
      evaluate: true,
    });
  });

  test("the agent under test is the project's version named by config_version_id, and the run records it", async () => {
    const { apiKey, projectId } = await h().organization(clinicConfig);
    const threadId = await h().thread(apiKey);
    const first = (await h().admin("GET", `/admin/projects/${projectId}`)).json<{ config_version_id: string }>().config_version_id;
    await h().admin("PUT", `/admin/projects/${projectId}/config`, { config: { ...clinicConfig, agent: { ...clinicConfig.agent, greeting: "Hi from version two!" } } });
    const run = async (version?: string) => {
      const response = await simulate(h(), apiKey, {
        thread_id: threadId,
        message: opening,
        ...(version ? { config_version_id: version } : {}),
        simulate: { max_turns: 1, create: true },
      });
      return response.json<SimulationBody>().extras.simulation;
    };
    assert.equal((await run()).turns[1]!.message, "Hi from version two!");
    const pinned = await run(first);
    assert.equal(pinned.turns[1]!.message, clinicConfig.agent.greeting);
    const stored = await h().request({ method: "GET", url: `/simulations/${pinned.id}`, headers: { authorization: apiKey } });
    assert.equal(stored.json<{ config_version_id: string }>().config_version_id, first);
  });

  test("streaming sends each turn's tokens with its turn index, then the complete response; also as server-sent events", async () => {
    const { apiKey } = await h().organization(clinicConfig);
    const threadId = await h().thread(apiKey);
    const payload = { thread_id: threadId, message: opening, streaming: true, simulate: { ...persona, initial_messages: ["Do you accept insurance?"], max_turns: 4 } };
    const response = await simulate(h(), apiKey, payload);
    assert.equal(response.status, 200);
    assert.equal(response.headers["content-type"], "application/x-ndjson");
    const lines = response.body.trim().split("\n").map((line) => JSON.parse(line) as { token: string; index: number; turn: number });
    const final = lines.pop() as unknown as SimulationBody;
    lines.forEach((line, index) => assert.equal(line.index, index));
    const { turns } = final.extras.simulation;
    const byTurn = turns.map((_turn, index) => lines.filter((line) => line.turn === index).map((line) => line.token).join(""));
    assert.deepEqual(byTurn, turns.map((turn) => turn.message));
    assert.ok(lines.filter((line) => line.turn === 1).length > 1, "the agent's reply streams word by word");
    assert.deepEqual([...new Set(lines.map((line) => line.turn))], turns.map((_turn, index) => index), "turns stream in order");

    const sse = await simulate(h(), apiKey, payload, { accept: "text/event-stream" });
    assert.match(String(sse.headers["content-type"]), /^text\/event-stream/);
    const events = sse.body.trim().split("\n\n").map((block) => {
      const [event, data] = block.split("\n");
      return { event: event!.replace("event: ", ""), data: JSON.parse(data!.replace("data: ", "")) as Record<string, unknown> };
    });
    assert.equal(events.at(-1)!.event, "message");
    const streamedFinal = events.at(-1)!.data as unknown as SimulationBody;
    assert.deepEqual(streamedFinal.extras.simulation.turns, turns, "the same persona, the same conversation");
    assert.ok(events.slice(0, -1).every((event) => event.event === "token" && typeof event.data["turn"] === "number"));
  });

  test("a simulation and chats on the same source thread, concurrently, leave both conversations intact", async () => {
    const { apiKey } = await h().organization(clinicConfig);
    const threadId = await h().thread(apiKey);
    const chats = ["What are your opening hours?", "Where is the clinic?", "Do you accept insurance?", "How much does a cleaning cost?"];
    const [simulation, ...replies] = await Promise.all([
      simulate(h(), apiKey, { thread_id: threadId, message: opening, simulate: { ...persona, max_turns: 8, create: true } }),
      ...chats.map((message) => simulate(h(), apiKey, { thread_id: threadId, message })),
    ]);
    assert.equal(simulation!.status, 200, simulation!.body);
    for (const reply of replies) assert.equal(reply.status, 200);
    const source = await historyOf(h(), apiKey, threadId);
    assert.equal(source.length, chats.length * 2);
    assert.deepEqual(
      source.filter((message) => message.role === "user").map((message) => message.message).sort(),
      [...chats].sort(),
    );
    for (let index = 0; index < source.length; index += 2) assert.deepEqual([source[index]!.role, source[index + 1]!.role], ["user", "assistant"]);
    const { turns, thread_id } = simulation!.json<SimulationBody>().extras.simulation;
    assert.deepEqual((await historyOf(h(), apiKey, thread_id!)).map((message) => [message.role, message.message]), turns.map((turn) => [turn.role, turn.message]));
  });

  test("simulation runs are the organization's: another organization, a thread token and unknown ids get nothing", async () => {
    const { apiKey } = await h().organization(clinicConfig);
    const other = await h().organization(clinicConfig);
    const threadId = await h().thread(apiKey);
    const created = await simulate(h(), apiKey, { thread_id: threadId, message: opening, simulate: { max_turns: 2, create: true } });
    const { id, thread_id } = created.json<SimulationBody>().extras.simulation;
    const read = (credential: string, simulationId = id) => h().request({ method: "GET", url: `/simulations/${simulationId}`, headers: { authorization: credential } });
    assert.equal((await read(apiKey)).status, 200);
    for (const response of [await read(other.apiKey), await read(apiKey, "00000000-0000-7000-8000-000000000000"), await read(apiKey, "nope")]) {
      assert.equal(response.status, 404);
      assert.deepEqual(response.json(), { detail: "Simulation not found" });
    }
    assert.equal((await h().request({ method: "GET", url: `/threads/${thread_id}`, headers: { authorization: other.apiKey } })).status, 404);
    const foreign = await simulate(h(), other.apiKey, { thread_id: threadId, message: opening, simulate: { create: true } });
    assert.deepEqual([foreign.status, foreign.json()], [404, { detail: "Thread not found" }]);

    const token = (await h().request({ method: "POST", url: `/threads/${threadId}/token`, headers: { authorization: apiKey } })).json<{ access_token: string }>().access_token;
    const byToken = await simulate(h(), token, { thread_id: threadId, message: opening, simulate: {} });
    assert.equal(byToken.status, 403);
    assert.equal((await read(token)).status, 403);
  });

  test("every bound is a 422 in FastAPI's shape", async () => {
    const { apiKey } = await h().organization(clinicConfig);
    const threadId = await h().thread(apiKey);
    const issues = async (simulateFields: Record<string, unknown>) =>
      (await simulate(h(), apiKey, { thread_id: threadId, message: opening, simulate: simulateFields })).json<{ detail: unknown[] }>().detail;
    assert.deepEqual(await issues({ max_turns: 0 }), [
      { type: "greater_than_equal", loc: ["body", "simulate", "max_turns"], msg: "Input should be greater than or equal to 1", input: 0, ctx: { ge: 1 } },
    ]);
    assert.deepEqual(await issues({ max_turns: 51 }), [
      { type: "less_than_equal", loc: ["body", "simulate", "max_turns"], msg: "Input should be less than or equal to 50", input: 51, ctx: { le: 50 } },
    ]);
    assert.deepEqual(await issues({ initial_messages: ["Fine", ""] }), [
      { type: "string_too_short", loc: ["body", "simulate", "initial_messages", 1], msg: "String should have at least 1 character", input: "", ctx: { min_length: 1 } },
    ]);
    const longType = "x".repeat(201);
    assert.deepEqual(await issues({ agent_type: longType }), [
      { type: "string_too_long", loc: ["body", "simulate", "agent_type"], msg: "String should have at most 200 characters", input: longType, ctx: { max_length: 200 } },
    ]);
    assert.deepEqual(await issues({ max_turns: 2, initial_messages: ["one", "two"] }), [
      {
        type: "value_error",
        loc: ["body", "simulate", "initial_messages"],
        msg: "Value error, message and initial_messages make 3 user turns, more than max_turns (2)",
        input: ["one", "two"],
        ctx: { error: {} },
      },
    ]);
    assert.equal((await simulate(h(), apiKey, { thread_id: threadId, message: opening, simulate: { create: "maybe" } })).status, 422);
    assert.equal((await simulate(h(), apiKey, { thread_id: threadId, message: opening, simulate: "yes" })).status, 422);
  });

  test("the project's simulation settings are validated: criterion keys are unique and do not shadow the defaults", async () => {
    const org = (await h().admin("POST", "/admin/organizations", { name: "Criteria" })).json<{ id: string }>();
    let projects = 0;
    const create = (simulation: unknown) => h().admin("POST", `/admin/organizations/${org.id}/projects`, { name: `p${(projects += 1)}`, config: { simulation } });
    const shadowing = await create({ criteria: [{ key: "no_repetition", description: "x" }] });
    assert.equal(shadowing.status, 422);
    assert.deepEqual(shadowing.json<{ detail: { loc: unknown[]; type: string }[] }>().detail.map((issue) => [issue.type, issue.loc]), [
      ["value_error", ["body", "config", "simulation", "criteria", 0, "key"]],
    ]);
    const duplicate = await create({ criteria: [{ key: "polite", description: "x" }, { key: "polite", description: "y" }] });
    assert.deepEqual(duplicate.json<{ detail: { loc: unknown[] }[] }>().detail.map((issue) => issue.loc), [["body", "config", "simulation", "criteria", 1, "key"]]);
    const badKey = await create({ criteria: [{ key: "Has Spaces", description: "x" }], provider: "someone" });
    assert.deepEqual(badKey.json<{ detail: { loc: unknown[]; type: string }[] }>().detail.map((issue) => [issue.type, issue.loc]), [
      ["literal_error", ["body", "config", "simulation", "provider"]],
      ["string_pattern_mismatch", ["body", "config", "simulation", "criteria", 0, "key"]],
    ]);
    assert.equal((await create({ provider: "openai", model: "m", api_key: "k", criteria: [{ key: "polite", description: "Is polite." }] })).status, 201);
  });
});
