import assert from "node:assert/strict";
import { describe, it } from "node:test";
import {
  BuiltinProvider,
  builtinFollowup,
  builtinReply,
  builtinText,
  type BuiltinSettings,
} from "../../../src/providers/llm/builtin.js";
import { EMPTY_SUMMARY, extractiveSummary } from "../../../src/providers/llm/extractive-summary.js";
import { wordChunks } from "../../../src/domain/shared/text/sentences.js";
import { tokenize } from "../../../src/domain/shared/text/tokens.js";
import type { PromptMessage } from "../../../src/providers/llm/types.js";
import { collect } from "./helpers.js";

const shop: BuiltinSettings = {
  greeting: "Hello! How can I help you today?",
  fallback: "I'm sorry, I don't have an answer to that yet.",
  knowledge: [
    { question: "What are your opening hours?", answer: "We are open from 9am to 6pm, Monday to Saturday." },
    { question: "How much does shipping cost?", answer: "Shipping is free for orders over 50 euros; otherwise it costs 4.90 euros." },
    { question: "How can I return an item?", answer: "You can return any item within 30 days using the prepaid label in your parcel." },
    { question: "Do you ship internationally?", answer: "We ship to all EU countries and to Switzerland and Norway." },
    { question: "How do I reset my password?", answer: "Click 'Forgot password' on the login page and follow the link we email you." },
    { question: "Où est le café ?", answer: "Le café est au premier étage." },
  ],
};

const answer = (index: number): string => shop.knowledge[index]?.answer ?? assert.fail(`no entry ${index}`);
const user = (content: string): PromptMessage => ({ role: "user", content });
const agent = (content: string): PromptMessage => ({ role: "assistant", content });
const system: PromptMessage = { role: "system", content: "You are a shop assistant." };

describe("tokenize", () => {
  it("folds case and accents, drops stop words and maps word variants to one key", () => {
    assert.deepEqual(tokenize("Are the CAFÉS opening?"), tokenize("cafe opened"));
    assert.deepEqual(tokenize("policies shipping boxes"), tokenize("policy shipped box"));
    assert.deepEqual(tokenize("What is it that you do?"), []);
  });
});

describe("the builtin reply", () => {
  it("answers with the knowledge entry BM25 ranks first", () => {
    assert.equal(builtinReply(shop, [system, user("When do you open on Saturday?")]), answer(0));
    assert.equal(builtinReply(shop, [user("How much is shipping to Germany?")]), answer(1));
    assert.equal(builtinReply(shop, [user("Do you deliver to Norway?")]), answer(3));
    assert.equal(builtinReply(shop, [user("I forgot my password")]), answer(4));
  });

  it("matches words whatever their accents", () => {
    assert.equal(builtinReply(shop, [user("ou est le CAFE")]), answer(5));
  });

  it("answers from the knowledge base even on the first message", () => {
    assert.equal(builtinReply(shop, [user("Is shipping free?")]), answer(1));
    assert.equal(builtinReply(shop, [agent(shop.greeting), user("Is shipping free?")]), answer(1));
  });

  it("greets when the first message matches nothing", () => {
    assert.equal(builtinReply(shop, [system, user("Hi there!")]), shop.greeting);
    assert.equal(builtinReply(shop, [user("Tell me a joke about penguins")]), shop.greeting);
  });

  it("falls back when a later message matches nothing", () => {
    const conversation = [user("Hi"), agent(shop.greeting), user("Tell me a joke about penguins")];
    assert.equal(builtinReply(shop, conversation), shop.fallback);
  });

  it("does not answer when the query shares only a minor word with an entry", () => {
    assert.equal(builtinReply(shop, [user("hi"), agent("hello"), user("what email client do you recommend for linux")]), shop.fallback);
  });

  it("greets when there is no user message at all", () => {
    assert.equal(builtinReply(shop, [system]), shop.greeting);
  });

  it("falls back when the project has no knowledge", () => {
    assert.equal(builtinReply({ ...shop, knowledge: [] }, [user("a"), agent("b"), user("opening hours?")]), shop.fallback);
  });
});

describe("the builtin follow-up", () => {
  it("offers the related entry that has not been answered yet", () => {
    const conversation = [user("How much does shipping cost?"), agent(answer(1))];
    const followup = builtinFollowup(shop, conversation);
    assert.equal(followup, `One more thing that may help: Do you ship internationally? ${answer(3)}`);
  });

  it("checks in with the greeting when every related entry has been answered", () => {
    const conversation = [user("Tell me a joke"), agent(shop.fallback)];
    assert.equal(builtinFollowup(shop, conversation), `Just checking in. ${shop.greeting}`);
  });

  it("greets an empty conversation", () => {
    assert.equal(builtinFollowup(shop, [system]), shop.greeting);
  });
});

describe("the builtin summary", () => {
  const conversation = [
    system,
    user("Hi!"),
    agent("Hello! How can I help you today?"),
    user("My parcel from order 4512 arrived damaged and the blender inside is cracked. I would like a replacement. Thanks."),
    agent("I'm sorry to hear that. I have arranged a free replacement blender that ships tomorrow. You will receive a tracking link by email."),
    user("ok thanks"),
  ];

  it("keeps the most informative user and agent sentences in their original order", () => {
    assert.equal(
      extractiveSummary(conversation),
      "The user said: My parcel from order 4512 arrived damaged and the blender inside is cracked. I would like a replacement. " +
        "The agent answered: I have arranged a free replacement blender that ships tomorrow. You will receive a tracking link by email.",
    );
  });

  it("closes sentences that lack punctuation and names the agent alone when the user said nothing", () => {
    assert.equal(extractiveSummary([agent("Your table is booked for eight\nSee you tonight")]), "The agent said: Your table is booked for eight. See you tonight.");
  });

  it("says there is nothing to summarize for an empty conversation", () => {
    assert.equal(extractiveSummary([system]), EMPTY_SUMMARY);
  });

  it("gives the same text for the analysis task", () => {
    assert.equal(builtinText(shop, { task: "analysis", messages: conversation }), builtinText(shop, { task: "summary", messages: conversation }));
  });
});

describe("the builtin provider", () => {
  it("streams word by word, each piece one word with the whitespace after it", async () => {
    const provider = new BuiltinProvider(shop);
    const deltas = await collect(provider.stream({ task: "reply", messages: [user("When are you open?")] }));
    assert.equal(deltas.join(""), answer(0));
    assert.deepEqual(deltas.slice(0, 3), ["We ", "are ", "open "]);
  });

  it("gives the text in one piece when nothing reads it as it comes, and nothing for an empty text", async () => {
    const provider = new BuiltinProvider(shop);
    assert.deepEqual(await collect(provider.stream({ task: "reply", messages: [user("When are you open?")], streamed: false })), [answer(0)]);
    const outputs = [];
    for await (const output of provider.respond({ task: "reply", messages: [user("When are you open?")], streamed: false })) outputs.push(output);
    assert.deepEqual(outputs, [{ type: "text", text: answer(0) }]);
    assert.deepEqual(await collect(new BuiltinProvider({ ...shop, greeting: "" }).stream({ task: "reply", messages: [], streamed: false })), []);
  });

  it("splits text into words that join back exactly, whitespace included", () => {
    for (const text of ["", "   ", "one", "  lead and trail  ", "tabs\tand\n\nnew lines", "emoji 👋🏽 and 日本語"]) {
      const words = wordChunks(text);
      assert.equal(words.join(""), text);
      assert.ok(words.every((word) => word.trim().split(/\s+/).length <= 1), JSON.stringify(words));
    }
  });

  it("answers identically from separate instances", async () => {
    const request = { task: "followup" as const, messages: [user("Do you ship to Norway?"), agent("Yes.")] };
    const first = await collect(new BuiltinProvider(shop).stream(request));
    const second = await collect(new BuiltinProvider({ ...shop, knowledge: [...shop.knowledge] }).stream(request));
    assert.deepEqual(first, second);
  });
});
