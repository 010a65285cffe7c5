import { setOwn } from "./plain-object.js";

export type PythonJsonResult = { ok: true; value: unknown } | { ok: false; pos: number; msg: string };

/** CPython's JSONDecodeError: `msg` and `pos` (here a UTF-16 index until it is reported). */
class DecodeError extends Error {
  constructor(
    readonly index: number,
    readonly reason: string,
  ) {
    super(reason);
  }
}

const ESCAPES: Readonly<Record<string, string>> = { '"': '"', "\\": "\\", "/": "/", b: "\b", f: "\f", n: "\n", r: "\r", t: "\t" };
/** Nesting levels of arrays and objects before the parser gives up, as CPython does with RecursionError. */
const MAX_DEPTH = 1000;
/** The literal words CPython's scanner recognises; NaN and the infinities are its `parse_constant` defaults. */
const WORDS: readonly (readonly [string, unknown])[] = [
  ["null", null],
  ["true", true],
  ["false", false],
  ["NaN", Number.NaN],
  ["Infinity", Number.POSITIVE_INFINITY],
  ["-Infinity", Number.NEGATIVE_INFINITY],
];

function isWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d;
}

function isDigit(code: number): boolean {
  return code >= 0x30 && code <= 0x39;
}

/**
 * A port of CPython 3.12's C scanner (`Modules/_json.c`) with `json.loads` defaults: strict
 * strings, NaN/Infinity accepted, duplicate keys resolved last-wins. Offsets are UTF-16 indices
 * while scanning; every error offset sits before an ASCII delimiter, a quote or a control
 * character, so it never splits a surrogate pair and converts exactly to Python's code points.
 */
class Scanner {
  private pos = 0;
  private depth = 0;

  constructor(private readonly text: string) {}

  decode(): unknown {
    const value = this.scanOnce(this.skipWhitespace(0));
    const end = this.skipWhitespace(this.pos);
    if (end !== this.text.length) throw new DecodeError(end, "Extra data");
    return value;
  }

  private code(index: number): number {
    return this.text.charCodeAt(index);
  }

  private skipWhitespace(index: number): number {
    let next = index;
    while (next < this.text.length && isWhitespace(this.code(next))) next++;
    return next;
  }

  /** One JSON term at `index`; afterwards `pos` is just past it. */
  private scanOnce(index: number): unknown {
    if (index >= this.text.length) throw new DecodeError(index, "Expecting value");
    switch (this.text[index]) {
      case '"':
        return this.scanString(index + 1);
      case "{":
        return this.nested(() => this.parseObject(index + 1));
      case "[":
        return this.nested(() => this.parseArray(index + 1));
    }
    for (const [word, value] of WORDS) {
      if (this.text.startsWith(word, index)) {
        this.pos = index + word.length;
        return value;
      }
    }
    return this.matchNumber(index);
  }

  /**
   * CPython raises RecursionError past its recursion limit (about 1,000 to 1,500 levels, by version); this raises
   * RangeError at a fixed depth, so that what follows (validation, the 422 that echoes the input) never runs out of stack.
   */
  private nested<T>(parse: () => T): T {
    if (this.depth >= MAX_DEPTH) throw new RangeError("JSON nested too deeply");
    this.depth++;
    const value = parse();
    this.depth--;
    return value;
  }

  private matchNumber(start: number): number {
    const last = this.text.length - 1;
    let index = start;
    if (this.text[index] === "-") {
      index++;
      if (index > last) throw new DecodeError(start, "Expecting value");
    }
    const first = this.code(index);
    if (first >= 0x31 && first <= 0x39) {
      index++;
      while (index <= last && isDigit(this.code(index))) index++;
    } else if (first === 0x30) {
      index++;
    } else {
      throw new DecodeError(start, "Expecting value");
    }
    let isFloat = false;
    if (index < last && this.text[index] === "." && isDigit(this.code(index + 1))) {
      isFloat = true;
      index += 2;
      while (index <= last && isDigit(this.code(index))) index++;
    }
    if (index < last && (this.text[index] === "e" || this.text[index] === "E")) {
      const exponentStart = index;
      index++;
      if (index < last && (this.text[index] === "-" || this.text[index] === "+")) index++;
      while (index <= last && isDigit(this.code(index))) index++;
      if (isDigit(this.code(index - 1))) isFloat = true;
      else index = exponentStart;
    }
    this.pos = index;
    const value = Number(this.text.slice(start, index));
    // Python's int has no negative zero: `-0` is 0, while the float `-0.0` keeps its sign.
    return !isFloat && value === 0 ? 0 : value;
  }

  /** `start` is just past the opening quote. */
  private scanString(start: number): string {
    const begin = start - 1;
    const length = this.text.length;
    let chunks = "";
    let end = start;
    for (;;) {
      let next = end;
      while (next < length) {
        const code = this.code(next);
        if (code === 0x22 || code === 0x5c) break;
        if (code <= 0x1f) throw new DecodeError(next, "Invalid control character at");
        next++;
      }
      if (next >= length) throw new DecodeError(begin, "Unterminated string starting at");
      chunks += this.text.slice(end, next);
      if (this.text[next] === '"') {
        this.pos = next + 1;
        return chunks;
      }
      next++;
      if (next === length) throw new DecodeError(begin, "Unterminated string starting at");
      const escape = this.text[next] ?? "";
      if (escape !== "u") {
        const replacement = ESCAPES[escape];
        if (replacement === undefined) throw new DecodeError(next - 1, "Invalid \\escape");
        chunks += replacement;
        end = next + 1;
        continue;
      }
      next++;
      end = next + 4;
      // CPython checks `end >= len` here, so an escape that ends the input is reported at the `u`.
      if (end >= length) throw new DecodeError(next - 1, "Invalid \\uXXXX escape");
      const unit = this.hexQuad(next);
      const pairEnd = end + 6;
      if (unit >= 0xd800 && unit <= 0xdbff && pairEnd < length && this.text.startsWith("\\u", end)) {
        const low = this.hexQuad(end + 2);
        if (low >= 0xdc00 && low <= 0xdfff) {
          chunks += String.fromCharCode(unit, low);
          end = pairEnd;
          continue;
        }
      }
      chunks += String.fromCharCode(unit);
    }
  }

  private hexQuad(index: number): number {
    const digits = this.text.slice(index, index + 4);
    if (!/^[0-9a-fA-F]{4}$/.test(digits)) throw new DecodeError(index - 1, "Invalid \\uXXXX escape");
    return Number.parseInt(digits, 16);
  }

  private parseObject(start: number): Record<string, unknown> {
    const result: Record<string, unknown> = {};
    let index = this.skipWhitespace(start);
    if (this.text[index] !== "}") {
      for (;;) {
        if (this.text[index] !== '"') throw new DecodeError(index, "Expecting property name enclosed in double quotes");
        const key = this.scanString(index + 1);
        index = this.skipWhitespace(this.pos);
        if (this.text[index] !== ":") throw new DecodeError(index, "Expecting ':' delimiter");
        setOwn(result, key, this.scanOnce(this.skipWhitespace(index + 1)));
        index = this.skipWhitespace(this.pos);
        if (this.text[index] === "}") break;
        if (this.text[index] !== ",") throw new DecodeError(index, "Expecting ',' delimiter");
        index = this.skipWhitespace(index + 1);
      }
    }
    this.pos = index + 1;
    return result;
  }

  private parseArray(start: number): unknown[] {
    const result: unknown[] = [];
    let index = this.skipWhitespace(start);
    if (this.text[index] !== "]") {
      for (;;) {
        result.push(this.scanOnce(index));
        index = this.skipWhitespace(this.pos);
        if (this.text[index] === "]") break;
        if (this.text[index] !== ",") throw new DecodeError(index, "Expecting ',' delimiter");
        index = this.skipWhitespace(index + 1);
      }
    }
    this.pos = index + 1;
    return result;
  }
}

/**
 * Parses JSON exactly as CPython 3.12's `json.loads` does, including its error messages and `e.pos`
 * (counted in code points). Trailing commas get 3.12's messages, not 3.13's "Illegal trailing comma".
 * Nesting deeper than 1,000 levels throws a RangeError, where CPython raises RecursionError.
 */
export function parsePythonJson(text: string): PythonJsonResult {
  try {
    return { ok: true, value: new Scanner(text).decode() };
  } catch (error) {
    if (!(error instanceof DecodeError)) throw error;
    return { ok: false, pos: Array.from(text.slice(0, error.index)).length, msg: error.reason };
  }
}
