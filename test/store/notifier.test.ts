import assert from "node:assert/strict";
import { test } from "node:test";
import { Notifier } from "../../src/store/notifier.js";
import { forEachDatabase } from "../support/harness.js";

forEachDatabase("notifier", (h) => {
  test("payloads with quotes, backslashes, commas and braces arrive as sent, each on its channel", async () => {
    const db = h().database.db;
    const heard: string[] = [];
    const channels = ["parley_test_notifier_a", "parley_test_notifier_b"];
    const unlisteners = await Promise.all(channels.map((channel) => db.listen(channel, (payload) => heard.push(`${channel}: ${payload}`))));
    const sent = [
      `${channels[0]}: plain`,
      `${channels[0]}: say "hi", {then} \\ leave`,
      `${channels[1]}: \\"`,
      `${channels[1]}: `,
    ];
    const notifier = new Notifier(db);
    for (const line of sent) {
      const [channel, payload] = line.split(": ") as [string, string];
      notifier.notify(channel, payload);
    }
    await notifier.close();
    for (let waited = 0; heard.length < sent.length && waited < 5_000; waited += 10) await new Promise((resolve) => setTimeout(resolve, 10));
    for (const unlisten of unlisteners) await unlisten();
    assert.deepEqual([...heard].sort(), [...sent].sort());
  });
});
