import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { EndMarkerFilter } from "../../src/domain/simulations/persona.js";

function run(deltas: string[]): { tokens: string[]; message: string; ended: boolean } {
  const tokens: string[] = [];
  const filter = new EndMarkerFilter((token) => tokens.push(token));
  for (const delta of deltas) filter.push(delta);
  return { tokens, ...filter.finish() };
}

describe("the end marker of a simulated user played by a model", () => {
  it("never goes out, even split across deltas, and the tokens join to exactly the trimmed message", () => {
    const cases: [string[], string, boolean][] = [
      [["Thanks, ", "bye! [E", "ND]"], "Thanks, bye!", true],
      [["  Hello", " there  "], "Hello there", false],
      [["[END]"], "", true],
      [["Bye [END] and more text"], "Bye", true],
      [["Is [", "this] a bracket?"], "Is [this] a bracket?", false],
      [["Line one\n", "\n", "line two [EN"], "Line one\n\nline two [EN", false],
    ];
    for (const [deltas, message, ended] of cases) {
      const result = run(deltas);
      assert.equal(result.message, message, JSON.stringify(deltas));
      assert.equal(result.ended, ended, JSON.stringify(deltas));
      assert.equal(result.tokens.join(""), message, JSON.stringify(deltas));
      assert.ok(result.tokens.every((token) => !token.includes("[END]")));
    }
  });

  it("holds back only what could still become the marker", () => {
    const tokens: string[] = [];
    const filter = new EndMarkerFilter((token) => tokens.push(token));
    filter.push("Sure, see you [E");
    assert.deepEqual(tokens, ["Sure, see you"]);
    filter.push("xcellent]");
    assert.deepEqual(tokens, ["Sure, see you", " [Excellent]"]);
  });
});
