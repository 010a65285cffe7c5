import assert from "node:assert/strict";
import { before, test } from "node:test";
import fc from "fast-check";
import { forEachDatabase } from "../support/harness.js";
import { badCursor, junkAuthorization, junkId, junkString, percentEncode } from "./arbitraries.js";
import {
  assertDocumented,
  assertRefused,
  buildWorld,
  credentialFor,
  endpoints,
  nameOf,
  pathParams,
  property,
  send,
  takesCredential,
  unchanged,
  urlOf,
  validRequest,
  type Endpoint,
  type World,
} from "./support.js";

// Every request here is a read or must fail, so the one organization's data is checked unchanged throughout.

type Pair = [string, string];
type QueryChange = { set: Pair } | { add: Pair } | { remove: string } | { repeat: string; times: number } | { empty: string };

function applyChange(pairs: Pair[], change: QueryChange): Pair[] {
  if ("set" in change) return [...pairs.filter(([name]) => name !== change.set[0]), change.set];
  if ("add" in change) return [...pairs, change.add];
  if ("remove" in change) return pairs.filter(([name]) => name !== change.remove);
  if ("empty" in change) return pairs.map(([name, value]) => [name, name === change.empty ? "" : value]);
  const original = pairs.find(([name]) => name === change.repeat) ?? [change.repeat, "x"];
  return [...pairs, ...Array.from({ length: change.times }, () => original)];
}

/** The valid query with values replaced, added, removed, emptied or repeated up to a thousand times, plus raw junk. */
function nearValidQuery(world: World, endpoint: Endpoint): fc.Arbitrary<string> {
  const pairs = endpoint.query?.(world) ?? [];
  const names = [...new Set(pairs.map(([name]) => name))];
  const own = pairs.find(([name]) => name === "cursor")?.[1] ?? "";
  const name = fc.oneof(fc.constantFrom(...names), junkString);
  const value = fc.oneof(
    junkString,
    badCursor(world, own),
    fc.constantFrom("", "-1", "0", "101", "1.5", "1e3", "yes", "99999999999999999999", "2024-02-30", "1970-01-01T00:00:00+25:00"),
    fc.string({ minLength: 400, maxLength: 2000 }),
  );
  const change: fc.Arbitrary<QueryChange> = fc.oneof(
    fc.record({ set: fc.tuple(name, value) }),
    fc.record({ add: fc.tuple(name, value) }),
    fc.record({ remove: fc.constantFrom(...names) }),
    fc.record({ repeat: fc.constantFrom(...names), times: fc.integer({ min: 2, max: 1000 }) }),
    fc.record({ empty: fc.constantFrom(...names) }),
  );
  const rawTail = fc.constantFrom("", "&%", "&%zz=1", "&%E0%A4%A=", "&&&==&", "&a=%00", "&%ff%fe=%ff");
  return fc.record({ changes: fc.array(change, { minLength: 1, maxLength: 3 }), tail: rawTail }).map(({ changes, tail }) => {
    const query = changes.reduce(applyChange, pairs);
    return query.map(([key, text]) => `${percentEncode(key)}=${percentEncode(text)}`).join("&") + tail;
  });
}

const rawPathJunk = fc.constantFrom("%", "%zz", "%E0%A4%A", "%ED%A0%80", "%C0%AE%C0%AE", "%2e%2e", "..%2F..%2Fcalls", "%00", "%FF");

forEachDatabase("hostile queries, headers and path ids", (h) => {
  let world: World;
  before(async () => {
    world = await buildWorld(h());
  });

  test("queries with junk, repeated, empty, huge or missing values and bad cursors never cause a server error and change nothing", async () => {
    const queried = endpoints.filter((endpoint) => endpoint.query !== undefined);
    await unchanged(h(), world.organizationId, async () => {
      for (const endpoint of queried) {
        const request = validRequest(endpoint, world);
        const path = urlOf(endpoint, endpoint.ids?.(world) ?? {});
        await property(
          nearValidQuery(world, endpoint),
          async (query) => {
            const response = await send(h(), endpoint, { ...request, url: `${path}?${query}` });
            assertDocumented(endpoint, response, `${nameOf(endpoint)} ?${query.slice(0, 200)}`);
          },
          60,
        );
      }
    });
  });

  test("a junk Authorization value is 401 with WWW-Authenticate on every endpoint that needs a credential, and changes nothing", async () => {
    const guarded = endpoints.filter(takesCredential);
    await unchanged(h(), world.organizationId, async () => {
      for (const endpoint of guarded) {
        const request = validRequest(endpoint, world);
        await property(
          junkAuthorization(world),
          async (authorization) => {
            const response = await send(h(), endpoint, { ...request, headers: { authorization } });
            const context = `${nameOf(endpoint)} Authorization: ${authorization.slice(0, 100)}`;
            assert.equal(response.status, 401, `${context}: ${response.status} ${response.body}`);
            assert.equal(response.headers["www-authenticate"], "Bearer", context);
            assertDocumented(endpoint, response, context);
          },
          25,
        );
      }
    });
  });

  test("junk in other headers (content type, accept, request id, range, content length) never causes a server error on reads", async () => {
    const reads = endpoints.filter((endpoint) => !endpoint.socket && (endpoint.method === "GET" || endpoint.route === "/legacy/retrieve_conversations"));
    const headerValue = fc.oneof(junkString.filter((text) => /^[\t\x20-\x7e\xa0-\xff]*$/.test(text)), fc.constantFrom("text/event-stream", "bytes=0-", "bytes=-1", "bytes=5-1", "bytes=0-0,1-1,2-2", "-1", "99999999999"));
    const headers = fc.dictionary(fc.constantFrom("content-type", "accept", "x-request-id", "range", "content-length", "accept-encoding", "cookie"), headerValue, { minKeys: 1 });
    await unchanged(h(), world.organizationId, async () => {
      for (const endpoint of reads) {
        const request = validRequest(endpoint, world);
        await property(
          headers,
          async (extra) => {
            const response = await h().request({ ...request, headers: { ...extra, ...credentialFor(endpoint, world) } });
            assertDocumented(endpoint, response, `${nameOf(endpoint)} ${JSON.stringify(extra).slice(0, 200)}`);
            const requestId = response.headers["x-request-id"];
            assert.ok(typeof requestId === "string" && /^[\w.-]{1,128}$/.test(requestId), `x-request-id ${String(requestId)}`);
          },
          20,
        );
      }
    });
  });

  test("path ids that name nothing (odd, unicode, dot segments, very long, malformed encoding) are refused in the documented shape", async () => {
    // A vendor's socket accepts the upgrade whatever it names and refuses in band (see `inBand` in support.ts).
    const withIds = endpoints.filter((endpoint) => pathParams(endpoint).length > 0 && !endpoint.inBand);
    const id = fc.oneof(junkId.map((text) => ({ text, encoded: percentEncode(text) })), rawPathJunk.map((raw) => ({ text: raw, encoded: raw })));
    await unchanged(h(), world.organizationId, async () => {
      for (const endpoint of withIds) {
        const valid = validRequest(endpoint, world);
        const query = (endpoint.query?.(world) ?? []).map(([name, value]) => `${name}=${percentEncode(value)}`).join("&");
        await property(
          fc.record({ param: fc.constantFrom(...pathParams(endpoint)), id }),
          async ({ param, id: { encoded } }) => {
            const path = endpoint.route.replace(/:(\w+)/g, (_, name: string) => (name === param ? encoded : percentEncode(endpoint.ids?.(world)[name] ?? "")));
            const response = await send(h(), endpoint, { ...valid, url: query === "" ? path : `${path}?${query}` });
            assertRefused(endpoint, response, `${nameOf(endpoint)} ${path.slice(0, 200)}`);
          },
          30,
        );
      }
    });
  });
});
