import assert from "node:assert/strict";
import { before, test } from "node:test";
import { forEachDatabase } from "../support/harness.js";
import { nearValidBody, refusedBody } from "./arbitraries.js";
import { assertDocumented, assertRefused, buildWorld, endpoints, nameOf, property, unchanged, validRequest, type World } from "./support.js";

const bodyEndpoints = () => endpoints.filter((endpoint) => endpoint.body !== undefined);

const preview = (payload: unknown) => {
  const text = typeof payload === "string" ? payload : Buffer.isBuffer(payload) ? payload.toString("latin1") : JSON.stringify(payload);
  return (text ?? String(payload)).slice(0, 160);
};

forEachDatabase("hostile request bodies", (h) => {
  // `playground` takes requests that may succeed; `fortress` only requests that must fail, and is checked unchanged.
  let playground: World;
  let fortress: World;
  before(async () => {
    playground = await buildWorld(h());
    fortress = await buildWorld(h());
  });

  test("a valid body with fields replaced by junk, removed or added never causes a server error, and refusals are documented", async () => {
    for (const endpoint of bodyEndpoints()) {
      await property(
        nearValidBody(endpoint.body!(playground)),
        async (body) => {
          const request = validRequest(endpoint, playground);
          const response = await h().request({ ...request, headers: { ...request.headers, "content-type": "application/json" }, payload: JSON.stringify(body) });
          assertDocumented(endpoint, response, `${nameOf(endpoint)} ${preview(body)}`);
        },
        50,
      );
    }
  });

  test("lone surrogates in any string field are stored as U+FFFD, never a server error", async () => {
    for (const endpoint of bodyEndpoints()) {
      const valid = endpoint.body!(playground) as Record<string, unknown>;
      const body = Object.fromEntries(Object.entries(valid).map(([key, value]) => [key, typeof value === "string" ? `${value}\ud800` : value]));
      const request = validRequest(endpoint, playground);
      for (const payload of [JSON.stringify(body), JSON.stringify({ ...valid, context: { "\udc00": "\ud800x" }, user_type: "\udbff" })]) {
        const response = await h().request({ ...request, headers: { ...request.headers, "content-type": "application/json" }, payload });
        assertDocumented(endpoint, response, `${nameOf(endpoint)} ${payload}`);
      }
    }
  });

  test("bodies no model accepts (other JSON types, invalid or truncated JSON, foreign content types, a mistyped field) are refused and change nothing", async () => {
    await unchanged(h(), fortress.organizationId, async () => {
      for (const endpoint of bodyEndpoints()) {
        const request = validRequest(endpoint, fortress);
        await property(
          refusedBody(endpoint.body!(fortress), endpoint.nullableBody),
          async ({ contentType, payload }) => {
            const response = await h().request({ ...request, headers: { ...request.headers, "content-type": contentType }, payload });
            assertRefused(endpoint, response, `${nameOf(endpoint)} ${contentType} ${preview(payload)}`);
          },
          50,
        );
      }
    });
  });

  test("an absent body and a JSON null body are a missing body on every endpoint that takes one", async () => {
    await unchanged(h(), fortress.organizationId, async () => {
      for (const endpoint of bodyEndpoints()) {
        const { payload: _valid, ...request } = validRequest(endpoint, fortress);
        for (const payload of [undefined, "null"]) {
          const response = await h().request({ ...request, headers: { ...request.headers, "content-type": "application/json" }, ...(payload === undefined ? {} : { payload }) });
          assert.equal(response.status, 422, `${nameOf(endpoint)} body ${String(payload)}`);
          assert.deepEqual(response.json(), { detail: [{ type: "missing", loc: ["body"], msg: "Field required", input: null }] });
        }
      }
    });
  });
});
