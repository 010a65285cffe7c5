import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Type, type TSchema } from "@sinclair/typebox";
import type { ValidationIssue } from "../../../src/domain/shared/validation-issue.js";
import { jsonInvalidIssue, validatePart } from "../../../src/http/validation/validator.js";

/** Validates `raw` as the body field `v` and returns the issues. */
function issues(schema: TSchema, raw: unknown): ValidationIssue[] {
  return validatePart(Type.Object({ v: schema }), { v: raw }, "body").issues;
}

/** Validates `raw` as the body field `v`, which must pass, and returns its coerced value. */
function coerced(schema: TSchema, raw: unknown): unknown {
  const result = validatePart(Type.Object({ v: schema }), { v: raw }, "body");
  assert.deepEqual(result.issues, []);
  return (result.value as { v: unknown }).v;
}

/** The single issue for field `v`, as FastAPI would return it. */
function at(type: string, msg: string, input: unknown, ctx?: Record<string, unknown>): ValidationIssue[] {
  const loc = ["body", "v"];
  return [ctx === undefined ? { type, loc, msg, input } : { type, loc, msg, input, ctx }];
}

describe("validatePart on a body", () => {
  const Item = Type.Object({ name: Type.String(), price: Type.Number(), tags: Type.Optional(Type.Array(Type.String())) });

  it("reports an absent or null body for a required model as missing at body", () => {
    const expected = [{ type: "missing", loc: ["body"], msg: "Field required", input: null }];
    assert.deepEqual(validatePart(Item, undefined, "body"), { value: undefined, issues: expected });
    assert.deepEqual(validatePart(Item, null, "body").issues, expected);
  });

  it("gives an optional body its default, or undefined without one", () => {
    assert.deepEqual(validatePart(Type.Optional(Item), undefined, "body"), { value: undefined, issues: [] });
    assert.deepEqual(validatePart(Type.Object({}, { default: { a: 1 } }), null, "body"), { value: { a: 1 }, issues: [] });
  });

  it("reports a missing field with the enclosing object as input", () => {
    assert.deepEqual(validatePart(Item, { name: "Foo" }, "body").issues, [
      { type: "missing", loc: ["body", "price"], msg: "Field required", input: { name: "Foo" } },
    ]);
  });

  it("rejects a non-object body, raw text included, with model_attributes_type", () => {
    const msg = "Input should be a valid dictionary or object to extract fields from";
    assert.deepEqual(validatePart(Item, "name=Foo", "body").issues, [{ type: "model_attributes_type", loc: ["body"], msg, input: "name=Foo" }]);
    assert.deepEqual(validatePart(Item, [1], "body").issues, [{ type: "model_attributes_type", loc: ["body"], msg, input: [1] }]);
  });

  it("rejects a non-object nested model with model_attributes_type at the field", () => {
    const msg = "Input should be a valid dictionary or object to extract fields from";
    assert.deepEqual(issues(Item, null), at("model_attributes_type", msg, null));
  });

  it("collects every error in property order and nests locations", () => {
    const Order = Type.Object({ id: Type.Integer(), item: Item, note: Type.String() });
    assert.deepEqual(validatePart(Order, { id: "x", item: { name: 1, price: 2, tags: ["a", 3] }, note: 4 }, "body").issues, [
      { type: "int_parsing", loc: ["body", "id"], msg: "Input should be a valid integer, unable to parse string as an integer", input: "x" },
      { type: "string_type", loc: ["body", "item", "name"], msg: "Input should be a valid string", input: 1 },
      { type: "string_type", loc: ["body", "item", "tags", 1], msg: "Input should be a valid string", input: 3 },
      { type: "string_type", loc: ["body", "note"], msg: "Input should be a valid string", input: 4 },
    ]);
  });

  it("fills defaults, drops undeclared keys and returns coerced values", () => {
    const Query = Type.Object({ limit: Type.Integer({ default: 20 }), newer: Type.Boolean({ default: false }), text: Type.String() });
    assert.deepEqual(validatePart(Query, { text: "hi", newer: "yes", extra: 1 }, "body"), {
      value: { limit: 20, newer: true, text: "hi" },
      issues: [],
    });
  });

  it("reports each extra key with its value when additional properties are forbidden", () => {
    const Closed = Type.Object({ a: Type.Integer() }, { additionalProperties: false });
    assert.deepEqual(validatePart(Closed, { a: 1, b: [2], c: null }, "body").issues, [
      { type: "extra_forbidden", loc: ["body", "b"], msg: "Extra inputs are not permitted", input: [2] },
      { type: "extra_forbidden", loc: ["body", "c"], msg: "Extra inputs are not permitted", input: null },
    ]);
  });

  it("builds FastAPI's json_invalid issue", () => {
    assert.deepEqual(jsonInvalidIssue(1, "Expecting property name enclosed in double quotes"), {
      type: "json_invalid",
      loc: ["body", 1],
      msg: "JSON decode error",
      input: {},
      ctx: { error: "Expecting property name enclosed in double quotes" },
    });
  });
});

describe("pydantic's scalar errors", () => {
  it("never lets a string field take a number or a boolean", () => {
    assert.deepEqual(issues(Type.String(), 5), at("string_type", "Input should be a valid string", 5));
    assert.deepEqual(issues(Type.String(), true), at("string_type", "Input should be a valid string", true));
  });

  it("coerces integers leniently: bools, whole floats and tidy strings", () => {
    for (const [raw, expected] of [[true, 1], [5.0, 5], [" 5 ", 5], ["+5", 5], ["007", 7], ["-007", -7], ["1_000", 1000], ["5.0", 5], ["5.00", 5]] as const) {
      assert.equal(coerced(Type.Integer(), raw), expected, `input ${JSON.stringify(raw)}`);
    }
  });

  it("reports int_parsing, int_from_float, int_type and finite_number", () => {
    const parsing = "Input should be a valid integer, unable to parse string as an integer";
    for (const raw of ["abc", "", "5.5", "5.", "1__000", "1e3"]) assert.deepEqual(issues(Type.Integer(), raw), at("int_parsing", parsing, raw));
    assert.deepEqual(issues(Type.Integer(), 1.5), at("int_from_float", "Input should be a valid integer, got a number with a fractional part", 1.5));
    assert.deepEqual(issues(Type.Integer(), null), at("int_type", "Input should be a valid integer", null));
    assert.deepEqual(issues(Type.Integer(), [1]), at("int_type", "Input should be a valid integer", [1]));
    assert.deepEqual(issues(Type.Integer(), Number.NaN), at("finite_number", "Input should be a finite number", Number.NaN));
  });

  it("reports float_parsing and float_type and reads Rust float syntax", () => {
    assert.equal(coerced(Type.Number(), " 2.5 "), 2.5);
    assert.equal(coerced(Type.Number(), "1_000.5"), 1000.5);
    assert.equal(coerced(Type.Number(), "-inf"), Number.NEGATIVE_INFINITY);
    assert.equal(coerced(Type.Number(), true), 1);
    assert.deepEqual(issues(Type.Number(), "x"), at("float_parsing", "Input should be a valid number, unable to parse string as a number", "x"));
    assert.deepEqual(issues(Type.Number(), {}), at("float_type", "Input should be a valid number", {}));
  });

  it("reports bool_parsing for uninterpretable strings and integers, bool_type otherwise", () => {
    const parsing = "Input should be a valid boolean, unable to interpret input";
    assert.equal(coerced(Type.Boolean(), 0), false);
    assert.equal(coerced(Type.Boolean(), 1), true);
    assert.deepEqual(issues(Type.Boolean(), "maybe"), at("bool_parsing", parsing, "maybe"));
    assert.deepEqual(issues(Type.Boolean(), 2), at("bool_parsing", parsing, 2));
    assert.deepEqual(issues(Type.Boolean(), 1.5), at("bool_type", "Input should be a valid boolean", 1.5));
    assert.deepEqual(issues(Type.Boolean(), null), at("bool_type", "Input should be a valid boolean", null));
  });

  it("reports every bound with its context, numbers printed as Rust does", () => {
    const Limit = Type.Integer({ minimum: 1, maximum: 100 });
    assert.deepEqual(issues(Limit, 0), at("greater_than_equal", "Input should be greater than or equal to 1", 0, { ge: 1 }));
    assert.deepEqual(issues(Limit, "101"), at("less_than_equal", "Input should be less than or equal to 100", "101", { le: 100 }));
    const Open = Type.Number({ exclusiveMinimum: 0, exclusiveMaximum: 2.5 });
    assert.deepEqual(issues(Open, 0), at("greater_than", "Input should be greater than 0", 0, { gt: 0 }));
    assert.deepEqual(issues(Open, 2.5), at("less_than", "Input should be less than 2.5", 2.5, { lt: 2.5 }));
    assert.deepEqual(issues(Type.Number({ minimum: 3.0 }), 2), at("greater_than_equal", "Input should be greater than or equal to 3", 2, { ge: 3 }));
    assert.deepEqual(issues(Type.Number({ minimum: 3 }), "nan"), at("greater_than_equal", "Input should be greater than or equal to 3", "nan", { ge: 3 }));
  });

  it("reports string lengths in code points with pydantic's plural rule", () => {
    const Short = Type.String({ minLength: 1, maxLength: 3 });
    assert.deepEqual(issues(Short, ""), at("string_too_short", "String should have at least 1 character", "", { min_length: 1 }));
    assert.deepEqual(issues(Short, "abcd"), at("string_too_long", "String should have at most 3 characters", "abcd", { max_length: 3 }));
    assert.equal(coerced(Short, "😀😀😀"), "😀😀😀");
    assert.equal(coerced(Short, "\ud83d\ud83da"), "\ud83d\ud83da");
    assert.deepEqual(issues(Short, "a😀😀😀"), at("string_too_long", "String should have at most 3 characters", "a😀😀😀", { max_length: 3 }));
    assert.deepEqual(issues(Type.String({ minLength: 2 }), "a"), at("string_too_short", "String should have at least 2 characters", "a", { min_length: 2 }));
  });

  it("reports a pattern mismatch with the pattern", () => {
    const pattern = "^[a-z]+$";
    assert.deepEqual(issues(Type.String({ pattern }), "AB"), at("string_pattern_mismatch", `String should match pattern '${pattern}'`, "AB", { pattern }));
  });

  it("reports literal_error with Python reprs joined by commas and a final or", () => {
    const Sort = Type.Union([Type.Literal("created_at"), Type.Literal("updated_at")]);
    const expected = "'created_at' or 'updated_at'";
    assert.deepEqual(issues(Sort, "name"), at("literal_error", `Input should be ${expected}`, "name", { expected }));
    const Abc = Type.Union([Type.Literal("a"), Type.Literal("b"), Type.Literal("c")]);
    assert.deepEqual(issues(Abc, "d"), at("literal_error", "Input should be 'a', 'b' or 'c'", "d", { expected: "'a', 'b' or 'c'" }));
    const Numbers = Type.Union([Type.Literal(1), Type.Literal(2)]);
    assert.deepEqual(issues(Numbers, "1"), at("literal_error", "Input should be 1 or 2", "1", { expected: "1 or 2" }));
    assert.equal(coerced(Numbers, true), 1);
    assert.deepEqual(issues(Type.Literal("it's"), "x"), at("literal_error", `Input should be "it's"`, "x", { expected: `"it's"` }));
  });

  it("reports enum for a string schema with enum values", () => {
    const Status = Type.Unsafe<string>({ type: "string", enum: ["ended", "error"] });
    assert.deepEqual(issues(Status, "busy"), at("enum", "Input should be 'ended' or 'error'", "busy", { expected: "'ended' or 'error'" }));
    assert.equal(coerced(Status, "ended"), "ended");
  });

  it("accepts null for a nullable field and reports the inner error at the same location", () => {
    const Maybe = Type.Union([Type.Integer(), Type.Null()]);
    assert.equal(coerced(Maybe, null), null);
    assert.deepEqual(issues(Maybe, "x"), at("int_parsing", "Input should be a valid integer, unable to parse string as an integer", "x"));
  });

  it("accepts anything for unknown and any", () => {
    assert.deepEqual(coerced(Type.Unknown(), { a: [1] }), { a: [1] });
    assert.equal(coerced(Type.Any(), null), null);
  });
});

describe("pydantic's container errors", () => {
  it("reports list_type, and too_short only once the items are valid", () => {
    const Tags = Type.Array(Type.Integer(), { minItems: 1 });
    assert.deepEqual(issues(Tags, "a"), at("list_type", "Input should be a valid list", "a"));
    assert.deepEqual(issues(Tags, {}), at("list_type", "Input should be a valid list", {}));
    const tooShort = { field_type: "List", min_length: 1, actual_length: 0 };
    assert.deepEqual(issues(Tags, []), at("too_short", "List should have at least 1 item after validation, not 0", [], tooShort));
  });

  it("reports too_long alone, whatever the items hold", () => {
    const Pair = Type.Array(Type.Integer(), { maxItems: 2 });
    const ctx = { field_type: "List", max_length: 2, actual_length: 3 };
    assert.deepEqual(issues(Pair, ["x", 1, 2]), at("too_long", "List should have at most 2 items after validation, not 3", ["x", 1, 2], ctx));
  });

  it("reports dict_type for records and dict-marked objects, and validates their values", () => {
    const Counts = Type.Record(Type.String(), Type.Integer());
    assert.deepEqual(issues(Counts, [1]), at("dict_type", "Input should be a valid dictionary", [1]));
    assert.deepEqual(issues(Counts, { a: "x" }), [
      { type: "int_parsing", loc: ["body", "v", "a"], msg: "Input should be a valid integer, unable to parse string as an integer", input: "x" },
    ]);
    assert.deepEqual(coerced(Counts, { a: "1", b: 2 }), { a: 1, b: 2 });
    const Context = Type.Object({}, { additionalProperties: true, dict: true });
    assert.deepEqual(issues(Context, "{}"), at("dict_type", "Input should be a valid dictionary", "{}"));
    assert.deepEqual(coerced(Context, { any: ["thing"] }), { any: ["thing"] });
  });
});

describe("pydantic's UUID", () => {
  const Id = Type.String({ format: "uuid" });
  const parsing = (input: string, error: string) => at("uuid_parsing", `Input should be a valid UUID, ${error}`, input, { error });

  it("accepts the uuid crate's forms and returns the lower-case hyphenated string", () => {
    const canonical = "0190f5a2-7b3c-7def-8123-456789abcdef";
    for (const raw of [canonical, canonical.toUpperCase(), canonical.replaceAll("-", ""), `{${canonical}}`, `urn:uuid:${canonical}`]) {
      assert.equal(coerced(Id, raw), canonical);
    }
  });

  it("reports the uuid crate's errors, positions counted from 1", () => {
    const prefix = "invalid character: expected an optional prefix of `urn:uuid:` followed by [0-9a-fA-F-], found";
    assert.deepEqual(issues(Id, "not-a-uuid"), parsing("not-a-uuid", `${prefix} \`n\` at 1`));
    assert.deepEqual(issues(Id, "abc"), parsing("abc", "invalid length: expected length 32 for simple format, found 3"));
    assert.deepEqual(issues(Id, "1234-5678"), parsing("1234-5678", "invalid group count: expected 5, found 2"));
    const shortGroup = "12345678-123-1234-1234-123456789abc";
    assert.deepEqual(issues(Id, shortGroup), parsing(shortGroup, "invalid group length in group 1: expected 4, found 3"));
    const longLast = "12345678-1234-1234-1234-123456789abcd";
    assert.deepEqual(issues(Id, longLast), parsing(longLast, "invalid group length in group 4: expected 12, found 13"));
    const braced = "{12345678-1234-1234-1234-12345678z}";
    assert.deepEqual(issues(Id, braced), parsing(braced, `${prefix} \`z\` at 34`));
  });

  it("reports uuid_type for anything but a string", () => {
    assert.deepEqual(issues(Id, 5), at("uuid_type", "UUID input should be a string, bytes or UUID object", 5));
  });
});

describe("pydantic's lax datetime", () => {
  const When = Type.String({ format: "date-time" });
  const fromDate = (input: string, error: string) => at("datetime_from_date_parsing", `Input should be a valid datetime or date, ${error}`, input, { error });

  it("parses ISO 8601 with any offset into a Date, a naive one as UTC", () => {
    assert.deepEqual(coerced(When, "2024-05-06T07:08:09.123456Z"), new Date("2024-05-06T07:08:09.123Z"));
    assert.deepEqual(coerced(When, "2024-05-06 07:08+0200"), new Date("2024-05-06T05:08:00Z"));
    assert.deepEqual(coerced(When, "2024-05-06t07:08:09,5−05:30"), new Date("2024-05-06T12:38:09.500Z"));
    assert.deepEqual(coerced(When, "2024-05-06T07:08:09"), new Date("2024-05-06T07:08:09Z"));
  });

  it("reads a date alone as midnight", () => {
    assert.deepEqual(coerced(Type.String({ format: "date-or-date-time" }), "2024-02-29"), new Date("2024-02-29T00:00:00Z"));
  });

  it("reads digit strings and numbers as Unix seconds, or milliseconds past 2e10", () => {
    assert.deepEqual(coerced(When, "1641039194"), new Date("2022-01-01T12:13:14Z"));
    assert.deepEqual(coerced(When, "1641039194123"), new Date("2022-01-01T12:13:14.123Z"));
    assert.deepEqual(coerced(When, 1641039194.5), new Date("2022-01-01T12:13:14.500Z"));
    assert.deepEqual(coerced(When, -1.25), new Date(-1750));
  });

  it("reports the date parser's error for a string that is no datetime", () => {
    assert.deepEqual(issues(When, "not a date"), fromDate("not a date", "invalid character in year"));
    assert.deepEqual(issues(When, "24-05-06"), fromDate("24-05-06", "input is too short"));
    assert.deepEqual(coerced(When, "2024"), new Date(2024_000));
    assert.deepEqual(issues(When, "2024-05-06T25:00"), fromDate("2024-05-06T25:00", "unexpected extra characters at the end of the input"));
    assert.deepEqual(issues(When, "2024-13-01"), fromDate("2024-13-01", "month value is outside expected range of 1-12"));
    assert.deepEqual(issues(When, "2023-02-29"), fromDate("2023-02-29", "day value is outside expected range"));
    assert.deepEqual(issues(When, "99999999999999999"), fromDate("99999999999999999", "dates after 9999 are not supported as unix timestamps"));
  });

  it("reports datetime_parsing for out-of-range numbers and year 0", () => {
    const error = "dates after 9999 are not supported as unix timestamps";
    assert.deepEqual(issues(When, 1e20), at("datetime_parsing", `Input should be a valid datetime, ${error}`, 1e20, { error }));
    const year0 = "year 0 is out of range";
    assert.deepEqual(issues(When, "0000-01-01"), at("datetime_parsing", `Input should be a valid datetime, ${year0}`, "0000-01-01", { error: year0 }));
  });

  it("reports datetime_type for booleans, null and containers", () => {
    for (const raw of [true, null, []]) assert.deepEqual(issues(When, raw), at("datetime_type", "Input should be a valid datetime", raw));
  });
});

describe("validatePart on query, header and path parameters", () => {
  const missing = (part: string, name: string) => ({ type: "missing", loc: [part, name], msg: "Field required", input: null });

  it("takes the last value of a repeated scalar query parameter", () => {
    const Query = Type.Object({ limit: Type.Integer() });
    assert.deepEqual(validatePart(Query, { limit: ["5", "7"] }, "query"), { value: { limit: 7 }, issues: [] });
  });

  it("takes every value of a list parameter and locates item errors by index", () => {
    const Query = Type.Object({ status: Type.Array(Type.Union([Type.Literal("ended"), Type.Literal("error")])) });
    assert.deepEqual(validatePart(Query, { status: ["ended", "error"] }, "query").value, { status: ["ended", "error"] });
    assert.deepEqual(validatePart(Query, { status: ["ended", "busy"] }, "query").issues, [
      { type: "literal_error", loc: ["query", "status", 1], msg: "Input should be 'ended' or 'error'", input: "busy", ctx: { expected: "'ended' or 'error'" } },
    ]);
    assert.deepEqual(validatePart(Query, { status: ["a,b"] }, "query").issues[0]?.input, "a,b");
  });

  it("treats an empty value as a value, not as absent", () => {
    const Query = Type.Object({ limit: Type.Optional(Type.Union([Type.Integer(), Type.Null()])) });
    assert.deepEqual(validatePart(Query, { limit: [""] }, "query").issues, [
      { type: "int_parsing", loc: ["query", "limit"], msg: "Input should be a valid integer, unable to parse string as an integer", input: "" },
    ]);
    assert.deepEqual(validatePart(Type.Object({ status: Type.Array(Type.String()) }), { status: [""] }, "query").value, { status: [""] });
  });

  it("uses defaults for absent parameters and reports required ones missing with a null input", () => {
    const Query = Type.Object({ query: Type.String(), limit: Type.Integer({ default: 10 }), status: Type.Array(Type.String()) });
    assert.deepEqual(validatePart(Query, { status: [] }, "query"), { value: { limit: 10 }, issues: [missing("query", "query"), missing("query", "status")] });
  });

  it("reads booleans with the exact str_as_bool table", () => {
    const Query = Type.Object({ newer: Type.Boolean() });
    for (const word of ["1", "t", "Y", "on", "YES", "true"]) assert.deepEqual(validatePart(Query, { newer: [word] }, "query").value, { newer: true });
    for (const word of ["0", "f", "n", "No", "off", "FALSE"]) assert.deepEqual(validatePart(Query, { newer: [word] }, "query").value, { newer: false });
    for (const word of ["", " true", "2", "truthy"]) {
      assert.deepEqual(validatePart(Query, { newer: [word] }, "query").issues, [
        { type: "bool_parsing", loc: ["query", "newer"], msg: "Input should be a valid boolean, unable to interpret input", input: word },
      ]);
    }
  });

  it("reports extra query keys when additional properties are forbidden", () => {
    const Query = Type.Object({ a: Type.String() }, { additionalProperties: false });
    assert.deepEqual(validatePart(Query, { a: ["1"], b: ["2"], c: ["3", "4"] }, "query").issues, [
      { type: "extra_forbidden", loc: ["query", "b"], msg: "Extra inputs are not permitted", input: "2" },
      { type: "extra_forbidden", loc: ["query", "c"], msg: "Extra inputs are not permitted", input: ["3", "4"] },
    ]);
  });

  it("reads hyphenated lower-case headers, taking the first of repeated values", () => {
    const Headers = Type.Object({ authorization: Type.String(), "x-count": Type.Integer() });
    assert.deepEqual(validatePart(Headers, { authorization: "Bearer k", "x-count": ["3", "4"], host: "h" }, "header"), {
      value: { authorization: "Bearer k", "x-count": 3 },
      issues: [],
    });
    assert.deepEqual(validatePart(Headers, { "x-count": "3" }, "header").issues, [missing("header", "authorization")]);
  });

  it("validates path parameters", () => {
    const Path = Type.Object({ thread_id: Type.String({ format: "uuid" }) });
    const error = "invalid length: expected length 32 for simple format, found 3";
    assert.deepEqual(validatePart(Path, { thread_id: "abc" }, "path").issues, [
      { type: "uuid_parsing", loc: ["path", "thread_id"], msg: `Input should be a valid UUID, ${error}`, input: "abc", ctx: { error } },
    ]);
  });
});
