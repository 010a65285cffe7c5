import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type AnalysisField, analyzeCall, type TranscriptLine } from "../../../src/domain/calls/call-analysis.js";
import { BuiltinProvider } from "../../../src/providers/llm/builtin.js";
import { textOutputs } from "../../../src/providers/llm/text-outputs.js";
import { type LlmOutput, type LlmProvider, type LlmRequest, ProviderError } from "../../../src/providers/llm/types.js";

/** A vendor model that answers every request with the same text, streamed in small pieces, and keeps the requests. */
class FixedAnswerProvider implements LlmProvider {
  readonly name = "fixed";
  readonly requests: LlmRequest[] = [];
  constructor(private readonly answer: string | Error) {}

  async *stream(request: LlmRequest): AsyncGenerator<string> {
    this.requests.push(request);
    if (this.answer instanceof Error) throw this.answer;
    for (let i = 0; i < this.answer.length; i += 7) yield this.answer.slice(i, i + 7);
  }

  respond(request: LlmRequest): AsyncGenerator<LlmOutput> {
    return textOutputs(this.stream(request));
  }
}

const TRANSCRIPT: TranscriptLine[] = [
  { role: "agent", content: "Hello, this is Acme dental. Would you like to book an appointment?" },
  { role: "user", content: "Yes please. Thursday morning would be great, thank you so much." },
  { role: "agent", content: "Your appointment is booked for Thursday at nine." },
];

const FIELDS: AnalysisField[] = [
  { name: "appointment_booked", type: "boolean", description: "Whether an appointment was booked" },
  { name: "preferred_day", type: "string" },
  { name: "party_size", type: "number" },
];

const builtin = new BuiltinProvider({ greeting: "Hello!", fallback: "Sorry.", knowledge: [] });

describe("analysis by a vendor model", () => {
  test("the model is asked for JSON with every field and its answer is kept when it has the declared types", async () => {
    const provider = new FixedAnswerProvider(
      "```json\n" +
        JSON.stringify({
          call_summary: "The user booked a dental appointment for Thursday morning.",
          user_sentiment: "Positive",
          call_successful: true,
          custom_analysis_data: { appointment_booked: true, preferred_day: "Thursday", party_size: 1 },
        }) +
        "\n```",
    );
    const analysis = await analyzeCall({ transcript: TRANSCRIPT, fields: FIELDS, provider, providerKind: "openai" });
    assert.deepEqual(analysis, {
      call_summary: "The user booked a dental appointment for Thursday morning.",
      user_sentiment: "Positive",
      call_successful: true,
      custom_analysis_data: { appointment_booked: true, preferred_day: "Thursday", party_size: 1 },
    });
    const request = provider.requests[0];
    assert.equal(request?.task, "analysis");
    const [system, user] = request?.messages ?? [];
    assert.equal(system?.role, "system");
    for (const field of FIELDS) assert.ok(system?.content.includes(`"${field.name}" (${field.type} or null)`), field.name);
    assert.ok(user?.content.includes("User: Yes please."));
  });

  test("values of the wrong type, unknown sentiments and missing fields become null", async () => {
    const provider = new FixedAnswerProvider(
      JSON.stringify({
        call_summary: 42,
        user_sentiment: "Ecstatic",
        call_successful: "yes",
        custom_analysis_data: { appointment_booked: "true", preferred_day: ["Thursday"], extra: 1 },
      }),
    );
    const analysis = await analyzeCall({ transcript: TRANSCRIPT, fields: FIELDS, provider, providerKind: "anthropic" });
    assert.match(analysis.call_summary, /^The user said: /);
    assert.equal(analysis.user_sentiment, "Unknown");
    assert.equal(analysis.call_successful, null);
    assert.deepEqual(analysis.custom_analysis_data, { appointment_booked: null, preferred_day: null, party_size: null });
  });

  test("an answer that is not JSON leaves an extractive summary and nulls", async () => {
    const provider = new FixedAnswerProvider("The call went well; the user booked an appointment.");
    const analysis = await analyzeCall({ transcript: TRANSCRIPT, fields: FIELDS, provider, providerKind: "openai" });
    assert.match(analysis.call_summary, /^The user said: Yes please\./);
    assert.deepEqual(
      [analysis.user_sentiment, analysis.call_successful, analysis.custom_analysis_data],
      ["Unknown", null, { appointment_booked: null, preferred_day: null, party_size: null }],
    );
  });

  test("a model that fails leaves an extractive summary rather than failing the analysis", async () => {
    const provider = new FixedAnswerProvider(new ProviderError("upstream returned 503", { status: 503, retryable: true }));
    const analysis = await analyzeCall({ transcript: TRANSCRIPT, fields: FIELDS, provider, providerKind: "openai" });
    assert.match(analysis.call_summary, /^The user said: /);
    assert.equal(analysis.call_successful, null);
  });
});

describe("analysis by the built-in agent", () => {
  async function analyze(transcript: TranscriptLine[], fields: AnalysisField[] = []) {
    return analyzeCall({ transcript, fields, provider: builtin, providerKind: "builtin" });
  }

  test("the summary is the built-in agent's extractive summary", async () => {
    const analysis = await analyze(TRANSCRIPT);
    assert.match(analysis.call_summary, /^The user said: .*Thursday.* The agent answered: /);
  });

  test("the user's sentiment follows the scores of the words they said", async () => {
    const sentimentOf = async (said: string) =>
      (await analyze([{ role: "agent", content: "This is terrible, awful, horrible news." }, { role: "user", content: said }])).user_sentiment;
    assert.equal(await sentimentOf("That is wonderful, thank you so much!"), "Positive");
    assert.equal(await sentimentOf("This is awful and I am angry."), "Negative");
    assert.equal(await sentimentOf("I will call back on Tuesday."), "Neutral");
    assert.equal(await sentimentOf("That is not good."), "Negative", "a negated word counts against");
  });

  test("a user who said nothing has unknown sentiment and an unsuccessful call", async () => {
    const analysis = await analyze([{ role: "agent", content: "Hello? Is anyone there?" }]);
    assert.equal(analysis.user_sentiment, "Unknown");
    assert.equal(analysis.call_successful, false);
  });

  test("success stays undecided once the user has spoken", async () => {
    assert.equal((await analyze(TRANSCRIPT)).call_successful, null);
  });

  test("a yes/no field is true when a statement affirms its words, and text and number fields stay null", async () => {
    const analysis = await analyze(TRANSCRIPT, FIELDS);
    assert.deepEqual(analysis.custom_analysis_data, { appointment_booked: true, preferred_day: null, party_size: null });
  });

  test("a set phrase such as \"no problem\" does not negate the statement it opens", async () => {
    const analysis = await analyze(
      [{ role: "agent", content: "No problem, your appointment is booked." }],
      [{ name: "appointment_booked", type: "boolean" }],
    );
    assert.equal(analysis.custom_analysis_data["appointment_booked"], true);
  });

  test("a yes/no field is false when the statement is negated", async () => {
    const analysis = await analyze(
      [{ role: "agent", content: "I'm sorry, the appointment could not be booked today." }],
      [{ name: "appointmentBooked", type: "boolean" }],
    );
    assert.equal(analysis.custom_analysis_data["appointmentBooked"], false);
  });

  test("an agent's question answered with yes or no decides the field", async () => {
    const fields: AnalysisField[] = [{ name: "wants_callback", type: "boolean" }];
    const asked = (answer: string): TranscriptLine[] => [
      { role: "agent", content: "Do you want a callback tomorrow?" },
      { role: "user", content: answer },
    ];
    assert.equal((await analyze(asked("Yes, that would help."), fields)).custom_analysis_data["wants_callback"], true);
    assert.equal((await analyze(asked("No thanks."), fields)).custom_analysis_data["wants_callback"], false);
    assert.equal((await analyze(asked("Maybe later."), fields)).custom_analysis_data["wants_callback"], null);
  });

  test("the latest evidence wins when the user changes their mind", async () => {
    const analysis = await analyze(
      [
        { role: "user", content: "I want a callback." },
        { role: "agent", content: "Sure." },
        { role: "user", content: "Actually, I don't want a callback after all." },
      ],
      [{ name: "wants_callback", type: "boolean" }],
    );
    assert.equal(analysis.custom_analysis_data["wants_callback"], false);
  });

  test("conditionals, unanswered questions and fields never mentioned stay null", async () => {
    const analysis = await analyze(
      [
        { role: "agent", content: "If you want a callback, just say so." },
        { role: "user", content: "Can I get a refund?" },
      ],
      [
        { name: "wants_callback", type: "boolean" },
        { name: "refund_issued", type: "boolean" },
        { name: "is_vip", type: "boolean" },
      ],
    );
    assert.deepEqual(analysis.custom_analysis_data, { wants_callback: null, refund_issued: null, is_vip: null });
  });
});
