import assert from "node:assert/strict";
import { test } from "node:test";
import pino from "pino";
import { RequestLines } from "../../src/http/request-line.js";

function capture(): { lines: string[]; write(line: string): void } {
  const lines: string[] = [];
  return { lines, write: (line) => void lines.push(line) };
}

test("the request line written by hand is pino's line for the same fields", () => {
  const viaPino = capture();
  const byHand = capture();
  const logger = pino({ level: "info" }, viaPino);
  const lines = new RequestLines(logger, byHand);
  for (const [id, method, route, status, ms] of [
    ["0192f7a0-7c1e-7cc3-b1a4-3f8e2d6c9a10", "GET", "/threads/:thread_id/messages", 200, 0.4],
    ["client.id-1", "POST", "/chat", 502, 1234.5],
    ["x", "GET", "unmatched", 404, 0],
  ] as const) {
    lines.write(id, method, route, status, ms);
    logger.info({ reqId: id, method, route, status, ms }, "request");
  }
  assert.equal(byHand.lines.length, 3);
  const withoutTime = (line: string) => {
    assert.ok(line.endsWith("\n"));
    const { time, ...rest } = JSON.parse(line) as { time: number };
    assert.equal(typeof time, "number");
    return JSON.stringify(rest);
  };
  assert.deepEqual(byHand.lines.map(withoutTime), viaPino.lines.map(withoutTime));
});

test("no request line is written when info lines are off; without an output the logger writes it", () => {
  const quiet = capture();
  new RequestLines(pino({ level: "warn" }, capture()), quiet).write("id", "GET", "/healthz", 200, 1);
  assert.deepEqual(quiet.lines, []);
  const viaLogger = capture();
  new RequestLines(pino({ level: "info" }, viaLogger), undefined).write("id", "GET", "/healthz", 200, 1);
  assert.equal((JSON.parse(viaLogger.lines[0]!) as { route: string }).route, "/healthz");
});
