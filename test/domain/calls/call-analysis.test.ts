import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type AnalysisField, analyzeCall, type TranscriptLine } from "../../../src/domain/calls/call-analysis.js";
import { BuiltinProvider } from "../../../src/providers/llm/builtin.js";
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

  async *respond(request: LlmRequest): AsyncGenerator<LlmOutput> {
    for await (const text of this.stream(request)) yield { type: "text", text };
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
    assert.match(analysis.call_summary, /^The agent asked "Would you like to book an appointment\?" and the caller said yes/);
    assert.equal(analysis.user_sentiment, "Unknown");
    assert.equal(analysis.call_successful, null);
    assert.deepEqual(analysis.custom_analysis_data, { appointment_booked: null, preferred_day: null, party_size: null });
  });

  test("an answer that is not JSON leaves the built-in summary and nulls", async () => {
    const provider = new FixedAnswerProvider("The call went well; the user booked an appointment.");
    const analysis = await analyzeCall({ transcript: TRANSCRIPT, fields: FIELDS, provider, providerKind: "openai" });
    assert.match(analysis.call_summary, /the caller said yes; then the agent said the caller's appointment is booked for Thursday at nine\./);
    assert.deepEqual(
      [analysis.user_sentiment, analysis.call_successful, analysis.custom_analysis_data],
      ["Unknown", null, { appointment_booked: null, preferred_day: null, party_size: null }],
    );
  });

  test("a model that fails leaves the built-in summary rather than failing the analysis", async () => {
    const provider = new FixedAnswerProvider(new ProviderError("upstream returned 503", { status: 503, retryable: true }));
    const analysis = await analyzeCall({ transcript: TRANSCRIPT, fields: FIELDS, provider, providerKind: "openai" });
    assert.match(analysis.call_summary, /^The agent asked /);
    assert.equal(analysis.call_successful, null);
  });
});

describe("analysis by the built-in agent", () => {
  async function analyze(transcript: TranscriptLine[], fields: AnalysisField[] = []) {
    return analyzeCall({ transcript, fields, provider: builtin, providerKind: "builtin" });
  }

  test("a well-heard call's summary says what the caller asked, what the agent answered, and how the call ended", async () => {
    const analysis = await analyze([
      { role: "user", content: "Hello?" },
      { role: "agent", content: "Hello! I'm Parley's built-in demo agent. Ask me about opening hours, prices or how to book." },
      { role: "user", content: "What are your opening hours?" },
      { role: "agent", content: "We are open Monday to Friday, 9 am to 5 pm." },
      { role: "user", content: "How much does it cost? What are your prices?" },
      { role: "agent", content: "A standard consultation costs 40 dollars." },
      { role: "user", content: "Thanks, that's all I needed. Goodbye." },
    ]);
    assert.equal(
      analysis.call_summary,
      "The caller asked about the opening hours; the agent said they are open Monday to Friday, 9 am to 5 pm. " +
        "The caller asked how much it costs and about the prices; the agent said a standard consultation costs 40 dollars. " +
        "The caller thanked the agent and said goodbye.",
    );
    assert.equal(analysis.call_successful, true);
    assert.equal(analysis.user_sentiment, "Positive");
  });

  test("a recognizer's unpunctuated, lower-case transcript reads the same, run-on questions included", async () => {
    const analysis = await analyze([
      { role: "user", content: "hello" },
      { role: "agent", content: "Hello! Ask me about opening hours or prices." },
      { role: "user", content: "how much does it cost what are your prices" },
      { role: "agent", content: "A standard consultation costs 40 dollars." },
      { role: "user", content: "thanks that's all i needed goodbye" },
    ]);
    assert.equal(
      analysis.call_summary,
      "The caller asked how much it costs and about the prices; the agent said a standard consultation costs 40 dollars. The caller thanked the agent and said goodbye.",
    );
  });

  test("what the caller wanted, the agent's own words quoted, an offer accepted, and a question the agent could not answer", async () => {
    const booking = await analyze([
      { role: "user", content: "How do I book an appointment?" },
      { role: "agent", content: "Tell me a day and time that suits you and I will book it." },
      { role: "user", content: "I want to book Tuesday at 3pm." },
      { role: "agent", content: "Done: you're booked for Tuesday at 3 pm." },
      { role: "user", content: "Do you have parking?" },
      { role: "agent", content: "Sorry, I cannot help with that." },
    ]);
    assert.equal(
      booking.call_summary,
      'The caller asked how to book an appointment; the agent said: "Tell me a day and time that suits you and I will book it." ' +
        "The caller wanted to book Tuesday at 3pm; the agent said the caller is booked for Tuesday at 3 pm. " +
        "The caller asked whether they have parking, which the agent could not answer.",
    );
    assert.equal(booking.call_successful, true);
    const offer = await analyze(TRANSCRIPT);
    assert.equal(
      offer.call_summary,
      "The agent asked \"Would you like to book an appointment?\" and the caller said yes; then the agent said the caller's appointment is booked for Thursday at nine. The caller thanked the agent.",
    );
  });

  test("a misheard call says plainly that the agent could not understand the caller, and was not successful", async () => {
    const analysis = await analyze([
      { role: "user", content: "oh" },
      { role: "agent", content: "Hello! How can I help?" },
      { role: "user", content: "yes my rogue where" },
      { role: "agent", content: "I'm sorry, I don't have an answer to that yet." },
      { role: "user", content: "i" },
    ]);
    assert.equal(analysis.call_summary, 'The agent could not understand the caller, who was heard saying only "oh", "yes my rogue where" and "i".');
    assert.equal(analysis.call_successful, false);
  });

  test("a call where the caller said nothing says so, with what the agent said", async () => {
    const analysis = await analyze([{ role: "agent", content: "Hello? Is anyone there?" }]);
    assert.equal(analysis.call_summary, 'The caller did not say anything that could be heard. The agent said: "Hello? Is anyone there?"');
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

  test("success stays undecided when the caller asked for nothing", async () => {
    const analysis = await analyze([
      { role: "user", content: "Hi there." },
      { role: "agent", content: "Hello! How can I help?" },
      { role: "user", content: "Bye." },
    ]);
    assert.equal(analysis.call_successful, null);
    assert.equal(analysis.call_summary, "The caller said goodbye.");
  });

  test("a yes/no field is true when a statement affirms its words; a day is read from the caller's words", async () => {
    const analysis = await analyze(TRANSCRIPT, FIELDS);
    assert.deepEqual(analysis.custom_analysis_data, { appointment_booked: true, preferred_day: "Thursday", party_size: null });
  });

  test("text and number fields are read where the caller says them, and stay null where nobody does", async () => {
    const fields: AnalysisField[] = [
      { name: "party_size", type: "number" },
      { name: "callerName", type: "string" },
      { name: "email", type: "string" },
      { name: "preferred_time", type: "string" },
      { name: "preferred_day", type: "string" },
      { name: "favourite_colour", type: "string" },
    ];
    const analysis = await analyze(
      [
        { role: "agent", content: "Hello, this is Acme. We are open Monday to Friday." },
        { role: "user", content: "My name is Ada Lovelace. I'd like a table for four people at 7 pm, my email is ada@example.org." },
        { role: "agent", content: "How many people again?" },
        { role: "user", content: "Sorry, 5 people." },
      ],
      fields,
    );
    assert.deepEqual(analysis.custom_analysis_data, {
      party_size: 5,
      callerName: "Ada Lovelace",
      email: "ada@example.org",
      preferred_time: "7 pm",
      preferred_day: null,
      favourite_colour: null,
    });
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
