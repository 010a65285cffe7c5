import fc from "fast-check";
import { encodeCursor } from "../../src/domain/shared/cursors.js";
import type { World } from "./support.js";

/** fast-check generators of hostile input: odd strings and numbers, spoiled JSON, bad cursors, junk credentials. */

const specialStrings = [
  "",
  " ",
  "\t\r\n",
  ".",
  "..",
  "../..",
  "../../etc/passwd",
  "%2e%2e%2f",
  "%00",
  "\u0000",
  "a\u0000b",
  "\ud800",
  "\udfff",
  "\u202e",
  "\ufeff",
  "😀",
  "𝒳̸̨",
  "NaN",
  "Infinity",
  "-Infinity",
  "null",
  "true",
  "0",
  "-1",
  "1e309",
  "9".repeat(400),
  "__proto__",
  "constructor",
  "{{name}}",
  "'; DROP TABLE threads; --",
  "<script>alert(1)</script>",
  "%s%n%x",
  "x".repeat(5000),
  "😀".repeat(600),
];

export const junkString = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...specialStrings) },
  { weight: 2, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) },
  { weight: 1, arbitrary: fc.string({ unit: "grapheme", maxLength: 20 }) },
  { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
);

export const junkNumber = fc.oneof(
  fc.integer(),
  fc.double(),
  fc.constantFrom(1e308, -1e308, 2 ** 53 + 2, -(2 ** 63), 2 ** 64, -0, 5e-324, 0.5, -1, 0, 1, 101, 1_000_001),
);

/** Arrays or objects nested `depth` levels, shallow enough to stay in the domain of a validation error. */
export const nesting = fc
  .record({ depth: fc.integer({ min: 1, max: 300 }), objects: fc.boolean() })
  .map(({ depth, objects }) => {
    let value: unknown = "leaf";
    for (let level = 0; level < depth; level += 1) value = objects ? { a: value } : [value];
    return value;
  });

export const junkValue: fc.Arbitrary<unknown> = fc.oneof(
  junkString,
  junkNumber,
  fc.boolean(),
  fc.constant(null),
  fc.jsonValue({ maxDepth: 3 }),
  nesting,
  fc.array(junkString, { maxLength: 5 }),
  fc.dictionary(junkString, junkString, { maxKeys: 4 }),
);

/** A value of another JSON type than `model`'s: always refused where `model` is the expected type. */
export function otherTypeThan(model: unknown, acceptsNull = false): fc.Arbitrary<unknown> {
  const options: fc.Arbitrary<unknown>[] = [junkNumber, fc.boolean(), fc.array(junkValue, { maxLength: 3 })];
  if (typeof model !== "string") options.push(junkString);
  if (typeof model !== "object") options.push(fc.dictionary(junkString, junkValue, { maxKeys: 3 }));
  if (typeof model !== "object" && !acceptsNull) options.push(fc.constant(null));
  return fc.oneof(...options);
}

/** Sets an own property even for `__proto__`, so that it is serialized like any other key. */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

type Mutation = { set: string; value: unknown } | { remove: string };

function mutation(keys: string[]): fc.Arbitrary<Mutation> {
  const key = keys.length > 0 ? fc.oneof(fc.constantFrom(...keys), junkString) : junkString;
  return fc.oneof(
    { weight: 3, arbitrary: fc.record({ set: key, value: junkValue }) },
    ...(keys.length > 0 ? [{ weight: 1, arbitrary: fc.record({ remove: fc.constantFrom(...keys) }) }] : []),
  );
}

function mutate(template: Record<string, unknown>, mutations: Mutation[]): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(template)) setOwn(body, key, value);
  for (const change of mutations) {
    if ("remove" in change) delete body[change.remove];
    else setOwn(body, change.set, change.value);
  }
  return body;
}

/** The valid body with one to three fields replaced by junk, removed, or added. */
export function nearValidBody(template: Record<string, unknown>): fc.Arbitrary<Record<string, unknown>> {
  return fc.array(mutation(Object.keys(template)), { minLength: 1, maxLength: 3 }).map((mutations) => mutate(template, mutations));
}

export interface RawBody {
  contentType: string;
  payload: string | Buffer;
}

const foreignTypes = ["text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "application/xml", "image/png", "application/octet-stream"];

/**
 * Bodies a model can never accept: JSON that is not an object, text that cannot parse as an object, a valid body cut
 * short, a foreign content type, or the valid body with its first field of the wrong type (plus other junk); null is
 * no wrong type for a field in `nullable`.
 */
export function refusedBody(template: Record<string, unknown>, nullable: readonly string[] = []): fc.Arbitrary<RawBody> {
  const json = (value: unknown): RawBody => ({ contentType: "application/json", payload: JSON.stringify(value) ?? "null" });
  const [firstKey, firstValue] = Object.entries(template)[0] ?? ["", ""];
  const text = JSON.stringify(template);
  return fc.oneof(
    fc.oneof(junkString, junkNumber, fc.boolean(), fc.constant(null), fc.array(junkValue, { maxLength: 4 })).map(json),
    fc
      .record({ text: fc.string({ unit: "binary", maxLength: 80 }), type: fc.constantFrom("application/json", "application/vnd.api+json", "application/json; charset=utf-8") })
      .filter(({ text }) => !text.trimStart().startsWith("{"))
      .map(({ text, type }) => ({ contentType: type, payload: text })),
    fc.integer({ min: 0, max: Math.max(0, text.length - 1) }).map((end) => ({ contentType: "application/json", payload: text.slice(0, end) })),
    fc.record({ contentType: fc.constantFrom(...foreignTypes), payload: fc.oneof(fc.constant(text), fc.string({ maxLength: 80 })) }),
    fc
      .record({ mutations: fc.array(mutation(Object.keys(template)), { maxLength: 2 }), poison: otherTypeThan(firstValue, nullable.includes(firstKey)) })
      .map(({ mutations, poison }) => json(mutate(template, [...mutations, { set: firstKey, value: poison }]))),
  );
}

/** Percent-encodes the UTF-8 bytes of a text (a lone surrogate becomes U+FFFD, as a client would send it). */
export function percentEncode(text: string): string {
  let encoded = "";
  for (const byte of Buffer.from(text, "utf8")) {
    const char = String.fromCharCode(byte);
    encoded += /[A-Za-z0-9\-_.~]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return encoded;
}

const base64url = (text: string) => Buffer.from(text).toString("base64url");

/** Cursors to refuse: not Base64, Base64 of junk or of cursor-shaped junk, another kind's or another thread's cursor. */
export function badCursor(world: World, own: string): fc.Arbitrary<string> {
  const otherThread = [encodeCursor("history", world.otherThreadId, 2), encodeCursor("search", world.otherThreadId, 2)];
  const otherKinds = [world.historyCursor, world.searchCursor, world.callCursor, ...otherThread].filter((cursor) => cursor !== own);
  return fc.oneof(
    fc.string({ maxLength: 40 }),
    fc.uint8Array({ maxLength: 60 }).map((bytes) => Buffer.from(bytes).toString("base64url")),
    fc.jsonValue({ maxDepth: 2 }).map((value) => base64url(JSON.stringify(value))),
    fc.record({ k: fc.constantFrom("h", "s", "x"), t: junkString, p: junkNumber }).map((value) => base64url(JSON.stringify(value))),
    fc.record({ c: fc.oneof(junkString, fc.constantFrom("2024-99-99T99:99:99.000000Z", "0000-01-01T00:00:00.000000Z", "2024-02-30T00:00:00.000000Z")), i: junkString }).map((value) => base64url(JSON.stringify(value))),
    fc.constantFrom(...otherKinds, `${own}=`, `${own}!`, "====", "x".repeat(513)),
  );
}

/** Authorization values that name no credential, within what HTTP can carry (visible Latin-1 and tabs). */
export function junkAuthorization(world: World): fc.Arbitrary<string> {
  const headerText = (maxLength: number) =>
    fc.string({ unit: fc.oneof(fc.constant("\t"), fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)), fc.integer({ min: 0xa0, max: 0xff }).map((code) => String.fromCharCode(code))), maxLength });
  const segment = fc.uint8Array({ minLength: 1, maxLength: 40 }).map((bytes) => Buffer.from(bytes).toString("base64url"));
  return fc.oneof(
    headerText(60),
    headerText(60).map((junk) => `Bearer ${junk}`),
    fc.constantFrom("", "Bearer", "Bearer ", "bearer\t", "Basic dXNlcjpwYXNz", `Bearer Bearer ${world.apiKey}`, `${world.apiKey}x`, world.apiKey.slice(0, -1), "x".repeat(10_000)),
    fc.tuple(segment, segment, segment).map((parts) => parts.join(".")),
    fc.tuple(segment, segment).map(([header, payload]) => `Bearer ${header}.${payload}.`),
    fc.constant(`${world.token.slice(0, -2)}AA`),
  );
}

/** Path ids that name nothing: odd strings, dot segments, unicode, very long ones, and UUIDs. */
export const junkId = fc.oneof(
  junkString.filter((text) => text !== ""),
  fc.string({ minLength: 1, maxLength: 40 }),
  fc.uuid(),
  fc.integer({ min: 101, max: 3000 }).map((length) => "a".repeat(length)),
);
