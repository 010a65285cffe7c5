import { fail, ok, type Outcome } from "./outcome.js";

/**
 * pydantic's `UUID` on a string: the uuid crate (1.18) parses it, and on failure its error's
 * Display becomes the message. The value stays a string, lower-case and hyphenated.
 */

const HYPHENATED = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const SIMPLE = /^[0-9a-fA-F]{32}$/;
const URN_PREFIX = "urn:uuid:";
const GROUP_STARTS = [0, 9, 14, 19, 24] as const;
const GROUP_LENGTHS = [8, 4, 4, 4, 12] as const;

/** `Uuid::parse_str`: simple, hyphenated, `{hyphenated}` or `urn:uuid:hyphenated`; the 32 hex digits. */
function parseUuid(text: string): string | undefined {
  if (SIMPLE.test(text)) return text;
  const hyphenated = text.startsWith("{") && text.endsWith("}") ? text.slice(1, -1) : text.startsWith(URN_PREFIX) ? text.slice(URN_PREFIX.length) : text;
  return HYPHENATED.test(hyphenated) ? hyphenated.replaceAll("-", "") : undefined;
}

/** The uuid crate's `InvalidUuid::into_err` and the Display of the error it builds (positions count from 1). */
function describeInvalid(text: string): string {
  const braced = text.length >= 2 && text.startsWith("{") && text.endsWith("}");
  const offset = braced ? 1 : text.startsWith(URN_PREFIX) ? URN_PREFIX.length : 0;
  const body = braced ? text.slice(1, -1) : text.slice(offset);
  const hyphens: number[] = [];
  for (let index = 0; index < body.length; index++) {
    const char = String.fromCodePoint(body.codePointAt(index) ?? 0);
    if (char === "-") hyphens.push(index);
    else if (!/^[0-9a-fA-F]$/.test(char)) {
      return `invalid character: expected an optional prefix of \`urn:uuid:\` followed by [0-9a-fA-F-], found \`${char}\` at ${index + offset + 1}`;
    }
  }
  if (hyphens.length === 0 && offset === 0 && !braced) return `invalid length: expected length 32 for simple format, found ${text.length}`;
  if (hyphens.length !== 4) return `invalid group count: expected 5, found ${hyphens.length + 1}`;
  for (let group = 0; group < 4; group++) {
    const start = GROUP_STARTS[group] ?? 0;
    const hyphen = hyphens[group] ?? 0;
    if (hyphen !== (GROUP_STARTS[group + 1] ?? 0) - 1) {
      return `invalid group length in group ${group}: expected ${GROUP_LENGTHS[group]}, found ${hyphen - start}`;
    }
  }
  // The crate measures the last group against the whole input, prefix or braces included.
  return `invalid group length in group 4: expected 12, found ${text.length - GROUP_STARTS[4]}`;
}

export function validateUuid(input: unknown): Outcome {
  if (typeof input !== "string") return fail("uuid_type", "UUID input should be a string, bytes or UUID object");
  const hex = parseUuid(input);
  if (hex === undefined) {
    const error = describeInvalid(input);
    return fail("uuid_parsing", `Input should be a valid UUID, ${error}`, { error });
  }
  const digits = hex.toLowerCase();
  return ok(`${digits.slice(0, 8)}-${digits.slice(8, 12)}-${digits.slice(12, 16)}-${digits.slice(16, 20)}-${digits.slice(20)}`);
}
