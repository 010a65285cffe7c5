import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { builtinReply, type BuiltinSettings } from "../../../src/providers/llm/builtin.js";
import { slotsAskedBy, slotsIn } from "../../../src/providers/llm/builtin-dialogue.js";
import type { PromptMessage } from "../../../src/providers/llm/types.js";

const demo: BuiltinSettings = {
  greeting: "Hello {{name}}! Ask me about opening hours, prices or how to book.",
  fallback: "I only know what my project's knowledge entries say.",
  knowledge: [
    { question: "What are your opening hours?", answer: "We are open Monday to Friday, 9 am to 5 pm." },
    { question: "How much does it cost? What are your prices?", answer: "A standard consultation costs 40 dollars." },
    { question: "How do I book an appointment?", answer: "Tell me a day and time that suits you and I will book it." },
  ],
};
const system: PromptMessage = { role: "system", content: "You are the demo assistant. The customer's name is Ada." };
const user = (content: string): PromptMessage => ({ role: "user", content });
const agent = (content: string): PromptMessage => ({ role: "assistant", content });

describe("the built-in agent's dialogue", () => {
  it("answers from the thread's context fields and fills {{key}} in its own texts", () => {
    const context = { name: "Ada", plan: "Gold", order_id: 4711, preferences: { tea: true } };
    assert.equal(builtinReply(demo, [system, user("What is my name?")], context), "Your name is Ada.");
    assert.equal(builtinReply(demo, [system, user("Who am I?")], context), "Your name is Ada.");
    assert.equal(builtinReply(demo, [system, user("hi"), agent("Hello"), user("Which plan am I on? What's my plan?")], context), "Your plan is Gold.");
    assert.equal(builtinReply(demo, [system, user("What is my order id?")], context), "Your order id is 4711.");
    assert.equal(builtinReply(demo, [system, user("What is my name?")], {}), "Hello ! Ask me about opening hours, prices or how to book.");
    assert.equal(builtinReply(demo, [system, user("Good morning")], context), "Hello Ada! Ask me about opening hours, prices or how to book.");
  });

  it("follows up on the day and time it asked for within the conversation", () => {
    const asked = [system, user("How do I book an appointment?"), agent("Tell me a day and time that suits you and I will book it.")];
    assert.equal(
      builtinReply(demo, [...asked, user("I want to book Tuesday at 3pm")]),
      "Thank you: Tuesday at 3 pm, noted in this conversation. I'm the built-in offline agent, so I can't complete the booking or contact anyone myself; someone from the team will confirm.",
    );
    const partial = builtinReply(demo, [...asked, user("Next Friday please")]);
    assert.equal(partial, "Thanks, next Friday noted. What time suits you?");
    assert.match(builtinReply(demo, [...asked, user("Next Friday please"), agent(partial), user("at 10:30")]), /^Thank you: 10:30, noted/);
    assert.match(builtinReply(demo, [system, user("Can I book Tuesday at 3pm?")]), /^Thank you: Tuesday at 3 pm, noted/, "details given with the question itself");
    assert.equal(builtinReply(demo, [...asked, user("What are your opening hours?")]), "We are open Monday to Friday, 9 am to 5 pm.", "a new question is answered as such");
  });

  it("says plainly what it is and what it cannot do", () => {
    const reply = builtinReply(demo, [system, user("What can you do?")]);
    assert.match(reply, /built-in agent/);
    assert.match(reply, /can't take actions such as bookings, payments or emails/);
    assert.match(reply, /What are your opening hours\?/);
    assert.match(builtinReply(demo, [system, user("hi"), agent("Hello"), user("Are you a bot?")]), /not a person and not a language model/);
  });

  it("is deterministic", () => {
    const messages = [system, user("How do I book?"), agent(demo.knowledge[2]!.answer), user("Tuesday 3pm")];
    assert.equal(builtinReply(demo, messages, { name: "Ada" }), builtinReply(demo, messages, { name: "Ada" }));
  });
});

describe("details in a message", () => {
  it("finds days, times, email addresses, phone numbers and names, and what a question asks for", () => {
    assert.deepEqual(slotsIn("Tuesday at 3pm"), { day: "Tuesday", time: "3 pm" });
    assert.deepEqual(slotsIn("on March 3rd, 15:30"), { day: "March 3rd", time: "15:30" });
    assert.deepEqual(slotsIn("2026-11-24 in the morning"), { day: "2026-11-24", time: "in the morning" });
    assert.deepEqual(slotsIn("mail me at ada@example.com"), { email: "ada@example.com" });
    assert.deepEqual(slotsIn("call +1 415 555 2671"), { phone: "+1 415 555 2671" });
    assert.deepEqual(slotsIn("My name is Ada Lovelace"), { name: "Ada Lovelace" });
    assert.deepEqual(slotsIn("nothing here"), {});
    assert.deepEqual(slotsAskedBy("Tell me a day and time that suits you."), ["day", "time"]);
    assert.deepEqual(slotsAskedBy("What is your email address?"), ["email"]);
    assert.deepEqual(slotsAskedBy("We are open from 9 to 5."), []);
  });
});
