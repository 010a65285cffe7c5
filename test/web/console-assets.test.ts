import assert from "node:assert/strict";
import { test } from "node:test";
import { forEachDatabase } from "../support/harness.js";

forEachDatabase("serving the console", (h) => {
  test("GET /console serves the page, its bundled script and styles, with a strict content security policy", async () => {
    const page = await h().request({ method: "GET", url: "/console" });
    assert.equal(page.status, 200);
    assert.equal(page.headers["content-type"], "text/html; charset=utf-8");
    assert.match(page.body, /<script type="module" src="\/console\/console\.js"><\/script>/);
    const policy = String(page.headers["content-security-policy"]);
    assert.match(policy, /script-src 'self'/);
    assert.match(policy, /frame-ancestors 'none'/);
    assert.equal(page.headers["x-content-type-options"], "nosniff");

    const script = await h().request({ method: "GET", url: "/console/console.js" });
    assert.equal(script.status, 200);
    assert.equal(script.headers["content-type"], "text/javascript; charset=utf-8");
    assert.ok(script.body.length > 10_000, "the bundle holds Preact, htm, the router and the client");
    assert.doesNotMatch(script.body, /^import /m, "one self-contained bundle");
    const styles = await h().request({ method: "GET", url: "/console/console.css" });
    assert.equal(styles.headers["content-type"], "text/css; charset=utf-8");

    const etag = String(script.headers["etag"]);
    const again = await h().request({ method: "GET", url: "/console/console.js", headers: { "if-none-match": etag } });
    assert.equal(again.status, 304);
    assert.equal(again.body, "");
  });

  test("GET /favicon.ico is an icon: one 32×32 PNG inside an ICO file", async () => {
    const response = await h().server.inject({ method: "GET", url: "/favicon.ico" });
    assert.equal(response.statusCode, 200);
    assert.equal(response.headers["content-type"], "image/x-icon");
    const icon = response.rawPayload;
    assert.deepEqual([icon.readUInt16LE(0), icon.readUInt16LE(2), icon.readUInt16LE(4)], [0, 1, 1], "an ICO header with one image");
    assert.deepEqual([icon[6], icon[7]], [32, 32]);
    const offset = icon.readUInt32LE(18);
    assert.equal(icon.readUInt32LE(14), icon.length - offset, "the image runs to the end of the file");
    assert.equal(icon.subarray(offset, offset + 8).toString("latin1"), "\x89PNG\r\n\x1a\n");
    assert.equal(icon.subarray(offset + 12, offset + 16).toString("latin1"), "IHDR");
    assert.deepEqual([icon.readUInt32BE(offset + 16), icon.readUInt32BE(offset + 20)], [32, 32]);
  });

  test("the console's routes are not part of the OpenAPI document", async () => {
    const document = (await h().request({ method: "GET", url: "/openapi.json" })).json<{ paths: Record<string, unknown> }>();
    assert.deepEqual(Object.keys(document.paths).filter((path) => path.startsWith("/console")), []);
  });
});
