import assert from "node:assert/strict";
import { test } from "node:test";
import { demoProjectConfig } from "../../src/domain/organizations/first-start.js";
import { forEachDatabase } from "../support/harness.js";

forEachDatabase("the built-in agent over the interface", (h) => {
  test("answers from the thread's context and follows up on what it asked, as a newcomer tries it", async () => {
    const { apiKey } = await h().organization(demoProjectConfig, "demo");
    const threadId = await h().thread(apiKey, { project_name: "demo", json_input: JSON.stringify({ name: "Ada" }) });
    const chat = async (message: string) => {
      const response = await h().request({ method: "POST", url: "/chat", headers: { authorization: apiKey }, payload: { thread_id: threadId, message, service_config_name: "demo" } });
      assert.equal(response.status, 200, response.body);
      return response.json<{ message: string }>().message;
    };
    assert.equal(await chat("What is my name?"), "Your name is Ada.");
    assert.equal(await chat("How do I book an appointment?"), "Tell me a day and time that suits you and I will book it.");
    assert.match(await chat("I want to book Tuesday at 3pm"), /^Thank you: Tuesday at 3 pm, noted in this conversation\. I'm the built-in offline agent, so I can't/);
  });
});
