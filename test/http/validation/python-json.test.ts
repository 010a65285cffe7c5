import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { parsePythonJson } from "../../../src/http/validation/python-json.js";

function failure(text: string): { pos: number; msg: string } {
  const result = parsePythonJson(text);
  assert.equal(result.ok, false, `expected ${JSON.stringify(text)} to fail`);
  return result.ok ? { pos: -1, msg: "" } : { pos: result.pos, msg: result.msg };
}

function value(text: string): unknown {
  const result = parsePythonJson(text);
  assert.ok(result.ok, `expected ${JSON.stringify(text)} to parse`);
  return result.value;
}

describe("parsePythonJson", () => {
  it("parses objects, arrays, strings, numbers and literals with surrounding whitespace", () => {
    assert.deepEqual(value(' \n{"a": [1, -2.5, 1E2, true, false, null], "b": {"c": "d"}}\t'), {
      a: [1, -2.5, 100, true, false, null],
      b: { c: "d" },
    });
  });

  it("accepts Python's NaN, Infinity and -Infinity literals", () => {
    assert.deepEqual(value("[NaN, Infinity, -Infinity]"), [Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]);
  });

  it("keeps the last of duplicate keys", () => {
    assert.deepEqual(value('{"a": 1, "a": 2}'), { a: 2 });
  });

  it("reads large integers as JavaScript numbers and an integer -0 as 0", () => {
    assert.equal(value("12345678901234567890"), 12345678901234567890);
    assert.ok(Object.is(value("-0"), 0));
    assert.ok(Object.is(value("-0.0"), -0));
  });

  it("decodes escapes, surrogate pairs and lone surrogates", () => {
    assert.equal(value('"\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9"'), '"\\/\b\f\n\r\t\u00e9');
    assert.equal(value('"\\ud83d\\ude00"'), "😀");
    assert.equal(value('"\\ud83d\\u0041"'), "\ud83dA");
  });

  it("keeps a __proto__ key as an own property", () => {
    const parsed = value('{"__proto__": {"polluted": true}}');
    assert.ok(typeof parsed === "object" && parsed !== null);
    assert.deepEqual(Object.keys(parsed), ["__proto__"]);
    assert.equal(Object.getPrototypeOf(parsed), Object.prototype);
  });

  it("reports an empty or blank document as Expecting value at its end", () => {
    assert.deepEqual(failure(""), { pos: 0, msg: "Expecting value" });
    assert.deepEqual(failure("  "), { pos: 2, msg: "Expecting value" });
  });

  it("reports FastAPI's documented example at position 1", () => {
    assert.deepEqual(failure("{some broken json}"), { pos: 1, msg: "Expecting property name enclosed in double quotes" });
  });

  it("reports each structural error where CPython does", () => {
    assert.deepEqual(failure('{"a" 1}'), { pos: 5, msg: "Expecting ':' delimiter" });
    assert.deepEqual(failure('{"a":1 "b":2}'), { pos: 7, msg: "Expecting ',' delimiter" });
    assert.deepEqual(failure("[1 2]"), { pos: 3, msg: "Expecting ',' delimiter" });
    assert.deepEqual(failure('{"a":}'), { pos: 5, msg: "Expecting value" });
    assert.deepEqual(failure('{"a":1}x'), { pos: 7, msg: "Extra data" });
    assert.deepEqual(failure("[1] [2]"), { pos: 4, msg: "Extra data" });
    assert.deepEqual(failure("["), { pos: 1, msg: "Expecting value" });
    assert.deepEqual(failure("{"), { pos: 1, msg: "Expecting property name enclosed in double quotes" });
    assert.deepEqual(failure('{"a"'), { pos: 4, msg: "Expecting ':' delimiter" });
    assert.deepEqual(failure('{"a":1'), { pos: 6, msg: "Expecting ',' delimiter" });
  });

  it("treats trailing commas as Python 3.12 does", () => {
    assert.deepEqual(failure('{"a":1,}'), { pos: 7, msg: "Expecting property name enclosed in double quotes" });
    assert.deepEqual(failure("[1,]"), { pos: 3, msg: "Expecting value" });
  });

  it("reads numbers like CPython's scanner, leaving what does not fit as extra data", () => {
    assert.deepEqual(failure("-"), { pos: 0, msg: "Expecting value" });
    assert.deepEqual(failure("01"), { pos: 1, msg: "Extra data" });
    assert.deepEqual(failure("1."), { pos: 1, msg: "Extra data" });
    assert.deepEqual(failure("1e"), { pos: 1, msg: "Extra data" });
    assert.deepEqual(failure("[-Inf]"), { pos: 1, msg: "Expecting value" });
    assert.deepEqual(failure("nul"), { pos: 0, msg: "Expecting value" });
  });

  it("reports an unterminated string at its opening quote", () => {
    assert.deepEqual(failure('"abc'), { pos: 0, msg: "Unterminated string starting at" });
    assert.deepEqual(failure('{"a":"b'), { pos: 5, msg: "Unterminated string starting at" });
    assert.deepEqual(failure('"\\'), { pos: 0, msg: "Unterminated string starting at" });
  });

  it("reports a raw control character at the character", () => {
    assert.deepEqual(failure('"a\u0001"'), { pos: 2, msg: "Invalid control character at" });
    assert.deepEqual(failure('"a\tb"'), { pos: 2, msg: "Invalid control character at" });
  });

  it("reports a bad escape at its backslash with CPython's single-backslash message", () => {
    assert.deepEqual(failure('"ab\\x"'), { pos: 3, msg: "Invalid \\escape" });
  });

  it("reports a bad or truncated \\u escape at the u", () => {
    assert.deepEqual(failure('"\\u12zz"'), { pos: 2, msg: "Invalid \\uXXXX escape" });
    assert.deepEqual(failure('"\\u12"'), { pos: 2, msg: "Invalid \\uXXXX escape" });
    assert.deepEqual(failure('"\\u0041'), { pos: 2, msg: "Invalid \\uXXXX escape" });
    assert.deepEqual(failure('"\\ud83d\\uzzzz"'), { pos: 8, msg: "Invalid \\uXXXX escape" });
  });

  it("counts positions in code points, not UTF-16 units", () => {
    assert.deepEqual(failure('["😀",]'), { pos: 5, msg: "Expecting value" });
    assert.deepEqual(failure('{"😀😀": 1,}'), { pos: 9, msg: "Expecting property name enclosed in double quotes" });
  });

  it("does not skip a byte order mark, which the body decoder already removed once", () => {
    assert.deepEqual(failure("\ufeff{}"), { pos: 0, msg: "Expecting value" });
  });
});
