import { fail, ok, type Outcome } from "./outcome.js";
import { numberKeyword, stringKeyword, type SchemaNode } from "./schema-node.js";

// Rust's `str::trim` strips Unicode White_Space, a slightly different set from JavaScript's `trim`.
const WHITE_SPACE = "[\\t-\\r \\u0085\\u00a0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]+";
const RUST_WHITESPACE = new RegExp(`^${WHITE_SPACE}|${WHITE_SPACE}$`, "g");
const JSON_INT = /^-?(?:0|[1-9][0-9]*)$/;
const RUST_FLOAT = /^[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:e[+-]?[0-9]+)?|inf|infinity|nan)$/i;
const FALSE_WORDS = new Set(["f", "n", "no", "off", "false"]);
const TRUE_WORDS = new Set(["t", "y", "on", "yes", "true"]);
const patterns = new Map<string, RegExp>();

/** pydantic's `{expected_plural}`: empty for exactly one. */
export function plural(count: number): string {
  return count === 1 ? "" : "s";
}

/** Python's `repr` of a str, escaping what Python escapes in the ASCII range. */
function pythonStringRepr(text: string): string {
  const quote = text.includes("'") && !text.includes('"') ? '"' : "'";
  let body = "";
  for (const char of text) {
    const code = char.codePointAt(0) ?? 0;
    if (char === quote || char === "\\") body += `\\${char}`;
    else if (char === "\n") body += "\\n";
    else if (char === "\r") body += "\\r";
    else if (char === "\t") body += "\\t";
    else if (code < 0x20 || code === 0x7f) body += `\\x${code.toString(16).padStart(2, "0")}`;
    else body += char;
  }
  return quote + body + quote;
}

function pythonRepr(value: unknown): string {
  if (typeof value === "string") return pythonStringRepr(value);
  if (typeof value === "boolean") return value ? "True" : "False";
  return String(value);
}

/** pydantic's `expected` context: Python reprs joined with ", " and a final " or ". */
function expectedRepr(choices: readonly unknown[]): string {
  const reprs = choices.map(pythonRepr);
  const last = reprs.pop() ?? "";
  return reprs.length === 0 ? last : `${reprs.join(", ")} or ${last}`;
}

/** Python's `==` on JSON scalars, where `True == 1` and `False == 0`. */
function pythonEquals(left: unknown, right: unknown): boolean {
  const numeric = (value: unknown): boolean => typeof value === "number" || typeof value === "boolean";
  if (typeof left === "boolean" || typeof right === "boolean") return numeric(left) && numeric(right) && Number(left) === Number(right);
  return left === right;
}

/** `Literal[...]` (type `literal_error`) or an Enum (type `enum`): the value is the choice the input equals. */
export function validateChoice(choices: readonly unknown[], input: unknown, type: "literal_error" | "enum"): Outcome {
  const match = choices.find((choice) => pythonEquals(choice, input));
  if (match !== undefined) return ok(match);
  const expected = expectedRepr(choices);
  return fail(type, `Input should be ${expected}`, { expected });
}

function matches(pattern: string, text: string): boolean {
  let regex = patterns.get(pattern);
  if (regex === undefined) {
    regex = new RegExp(pattern, "u");
    patterns.set(pattern, regex);
  }
  return regex.test(text);
}

const surrogate = /[\ud800-\udfff]/;

/** Characters as pydantic counts them (code points: a surrogate pair is one); an array of them only when it matters. */
function codePointLength(text: string): number {
  return surrogate.test(text) ? Array.from(text).length : text.length;
}

export function validateString(schema: SchemaNode, input: unknown): Outcome {
  if (typeof input !== "string") return fail("string_type", "Input should be a valid string");
  const length = codePointLength(input);
  const min = numberKeyword(schema, "minLength");
  if (min !== undefined && length < min) {
    return fail("string_too_short", `String should have at least ${min} character${plural(min)}`, { min_length: min });
  }
  const max = numberKeyword(schema, "maxLength");
  if (max !== undefined && length > max) {
    return fail("string_too_long", `String should have at most ${max} character${plural(max)}`, { max_length: max });
  }
  const pattern = stringKeyword(schema, "pattern");
  if (pattern !== undefined && !matches(pattern, input)) {
    return fail("string_pattern_mismatch", `String should match pattern '${pattern}'`, { pattern });
  }
  return ok(input);
}

/**
 * pydantic-core checks le, lt, ge, gt in that order, and rejects NaN under any bound (pydantic-core
 * #1037). Messages print numbers as Rust's Display does, which for these values is `String(n)`.
 */
function checkBounds(schema: SchemaNode, value: number): Outcome {
  const le = numberKeyword(schema, "maximum");
  if (le !== undefined && !(value <= le)) return fail("less_than_equal", `Input should be less than or equal to ${le}`, { le });
  const lt = numberKeyword(schema, "exclusiveMaximum");
  if (lt !== undefined && !(value < lt)) return fail("less_than", `Input should be less than ${lt}`, { lt });
  const ge = numberKeyword(schema, "minimum");
  if (ge !== undefined && !(value >= ge)) return fail("greater_than_equal", `Input should be greater than or equal to ${ge}`, { ge });
  const gt = numberKeyword(schema, "exclusiveMinimum");
  if (gt !== undefined && !(value > gt)) return fail("greater_than", `Input should be greater than ${gt}`, { gt });
  return ok(value);
}

function stripUnderscores(text: string): string | undefined {
  if (!text.includes("_") || text.startsWith("_") || text.endsWith("_") || text.includes("__")) return undefined;
  return text.replaceAll("_", "");
}

/** pydantic-core's `strip_leading_zeros`: `007` → `7`, `00.0` → `0.0`, `000` → `0`; anything else odd → undefined. */
function stripLeadingZeros(text: string): string | undefined {
  const first = text[0];
  if (first === undefined) return undefined;
  if ((first >= "1" && first <= "9") || first === "-") return text;
  if (first !== "0") return undefined;
  for (let index = 1; index < text.length; index++) {
    const char = text[index] ?? "";
    if (char === "0" || char === "_") continue;
    if ((char >= "1" && char <= "9") || char === "-") return text.slice(index);
    if (char === ".") return text.slice(index - 1);
    return undefined;
  }
  return text.slice(-1);
}

/** pydantic-core's `clean_int_str`: trims, drops a `+`, leading zeros, a `.000` tail and single underscores. */
function cleanIntString(text: string): string | undefined {
  let rest = text.replace(RUST_WHITESPACE, "");
  if (rest.startsWith("+")) {
    rest = rest.slice(1);
    if (rest.startsWith("-")) return undefined;
  }
  const negative = rest.startsWith("-");
  if (negative) {
    rest = rest.slice(1);
    if (rest.startsWith("-") || rest.startsWith("+")) return undefined;
  }
  const stripped = stripLeadingZeros(rest);
  if (stripped === undefined) return undefined;
  rest = stripped;
  const dot = rest.indexOf(".");
  if (dot >= 0 && /^0+$/.test(rest.slice(dot + 1))) rest = rest.slice(0, dot);
  const sign = negative ? "-" : "";
  const withoutUnderscores = stripUnderscores(rest);
  if (withoutUnderscores !== undefined) return sign + withoutUnderscores;
  return text.length === rest.length ? undefined : sign + rest;
}

function jsonInteger(text: string): number | undefined {
  if (!JSON_INT.test(text)) return undefined;
  const value = Number(text);
  return value === 0 ? 0 : value;
}

function stringToInteger(text: string): Outcome {
  const direct = jsonInteger(text);
  if (direct !== undefined) return ok(direct);
  const cleaned = cleanIntString(text);
  const value = cleaned === undefined ? undefined : jsonInteger(cleaned);
  return value === undefined ? fail("int_parsing", "Input should be a valid integer, unable to parse string as an integer") : ok(value);
}

function toInteger(input: unknown): Outcome {
  if (typeof input === "boolean") return ok(input ? 1 : 0);
  if (typeof input === "string") return stringToInteger(input);
  if (typeof input !== "number") return fail("int_type", "Input should be a valid integer");
  if (!Number.isFinite(input)) return fail("finite_number", "Input should be a finite number");
  if (!Number.isInteger(input)) return fail("int_from_float", "Input should be a valid integer, got a number with a fractional part");
  if (Math.abs(input) >= 2 ** 63) return fail("int_parsing_size", "Unable to parse input string as an integer, exceeded maximum size");
  return ok(input === 0 ? 0 : input);
}

export function validateInteger(schema: SchemaNode, input: unknown): Outcome {
  const parsed = toInteger(input);
  return parsed.ok ? checkBounds(schema, Number(parsed.value)) : parsed;
}

/** Rust's `f64::from_str` (which knows `inf` and `nan`), tried on the trimmed text and then without underscores. */
function rustFloat(text: string): number | undefined {
  if (!RUST_FLOAT.test(text)) return undefined;
  const word = text.replace(/^[+-]/, "").toLowerCase();
  if (word === "nan") return Number.NaN;
  if (word.startsWith("inf")) return text.startsWith("-") ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY;
  return Number(text);
}

function toFloat(input: unknown): Outcome {
  if (typeof input === "number") return ok(input);
  if (typeof input === "boolean") return ok(input ? 1 : 0);
  if (typeof input !== "string") return fail("float_type", "Input should be a valid number");
  const underscored = stripUnderscores(input);
  const value = rustFloat(input.replace(RUST_WHITESPACE, "")) ?? (underscored === undefined ? undefined : rustFloat(underscored));
  return value === undefined ? fail("float_parsing", "Input should be a valid number, unable to parse string as a number") : ok(value);
}

export function validateNumber(schema: SchemaNode, input: unknown): Outcome {
  const parsed = toFloat(input);
  return parsed.ok ? checkBounds(schema, Number(parsed.value)) : parsed;
}

/** pydantic's `str_as_bool`: exact words, ASCII letters matched case-insensitively, no trimming. */
function stringToBoolean(text: string): boolean | undefined {
  const lower = text.replace(/[A-Z]/g, (letter) => letter.toLowerCase());
  if (text === "0" || FALSE_WORDS.has(lower)) return false;
  if (text === "1" || TRUE_WORDS.has(lower)) return true;
  return undefined;
}

export function validateBoolean(input: unknown): Outcome {
  if (typeof input === "boolean") return ok(input);
  const parsing = fail("bool_parsing", "Input should be a valid boolean, unable to interpret input");
  if (typeof input === "string") {
    const value = stringToBoolean(input);
    return value === undefined ? parsing : ok(value);
  }
  // Numbers go through `float_as_int` first: a fractional, non-finite or beyond-i64 one is a type error.
  if (typeof input === "number" && Number.isInteger(input) && Math.abs(input) < 2 ** 63) return input === 0 || input === 1 ? ok(input === 1) : parsing;
  return fail("bool_type", "Input should be a valid boolean");
}
