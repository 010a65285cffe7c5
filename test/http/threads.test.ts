import assert from "node:assert/strict";
import { test } from "node:test";
import { SignJWT } from "jose";
import { uuidv7 } from "../../src/domain/shared/ids.js";
import { forEachDatabase, testSecrets } from "../support/harness.js";

forEachDatabase("threads and thread tokens", (h) => {
  test("a thread is created with defaults and read back with zero usage", async () => {
    const { apiKey } = await h().organization();
    const created = await h().request({ method: "POST", url: "/threads", headers: { authorization: apiKey }, payload: { type: "NORMAL" } });
    assert.equal(created.status, 200);
    const threadId = created.json<{ thread_id: string }>().thread_id;
    const read = await h().request({ method: "GET", url: `/threads/${threadId}`, headers: { authorization: `Bearer ${apiKey}` } });
    assert.equal(read.status, 200);
    assert.deepEqual(read.json(), {
      id: threadId,
      alias: null,
      timezone: "UTC",
      usage: { billable_messages: 0, billable_message_cost: 0, voice_minutes: 0, voice_cost: 0, total_cost: 0 },
    });
  });

  test("timezone, project, json input and alias are honoured and checked", async () => {
    const { apiKey } = await h().organization({ json_input: { schema: { type: "object", properties: { name: { type: "string" } } } } });
    const post = (payload: unknown) => h().request({ method: "POST", url: "/threads", headers: { authorization: apiKey }, payload: payload as object });
    const ok = await post({ timezone: "Europe/Amsterdam", project_name: "support", json_input: '{"name":"Ada"}', alias: "ada" });
    assert.equal(ok.status, 200);
    const read = await h().request({ method: "GET", url: `/threads/${ok.json<{ thread_id: string }>().thread_id}`, headers: { authorization: apiKey } });
    assert.equal(read.json<{ alias: string; timezone: string }>().alias, "ada");
    assert.equal(read.json<{ timezone: string }>().timezone, "Europe/Amsterdam");

    assert.equal((await post({ alias: "ada" })).status, 409);
    assert.deepEqual((await post({ project_name: "nope" })).json(), { detail: "Project not found" });
    const badZone = await post({ timezone: "Mars/Olympus" });
    assert.equal(badZone.status, 422);
    assert.deepEqual(badZone.json(), {
      detail: [{ type: "value_error", loc: ["body", "timezone"], msg: "Value error, unknown timezone 'Mars/Olympus'", input: "Mars/Olympus", ctx: { error: {} } }],
    });
    const notObject = await post({ json_input: "[1,2]" });
    assert.equal(notObject.status, 422);
    assert.deepEqual(notObject.json<{ detail: { loc: unknown }[] }>().detail[0]!.loc, ["body", "json_input"]);
    const badSchema = await post({ project_name: "support", json_input: '{"name": 5}' });
    assert.equal(badSchema.status, 422);
    const badType = await post({ type: "OTHER" });
    assert.deepEqual(badType.json(), {
      detail: [{ type: "literal_error", loc: ["body", "type"], msg: "Input should be 'NORMAL' or 'SIMULATION'", input: "OTHER", ctx: { expected: "'NORMAL' or 'SIMULATION'" } }],
    });
  });

  test("json input is merged into the thread's context and validated against the project's schema", async () => {
    const { apiKey } = await h().organization({ json_input: { schema: { type: "object", properties: { age: { type: "integer" } } } } });
    const threadId = await h().thread(apiKey);
    const send = (json_input: string) =>
      h().request({ method: "POST", url: `/threads/${threadId}/json-input`, headers: { authorization: apiKey }, payload: { project_name: "support", json_input } });
    const ok = await send('{"age": 41}');
    assert.equal(ok.status, 200);
    assert.deepEqual(ok.json(), { response: "JSON input received" });
    assert.equal((await send('{"age": "old"}')).status, 422);
    assert.equal((await send("not json")).status, 422);
    const missing = await h().request({ method: "POST", url: `/threads/${threadId}/json-input`, headers: { authorization: apiKey }, payload: {} });
    assert.deepEqual(missing.json(), {
      detail: [
        { type: "missing", loc: ["body", "project_name"], msg: "Field required", input: {} },
        { type: "missing", loc: ["body", "json_input"], msg: "Field required", input: {} },
      ],
    });
  });

  test("a missing Authorization header is FastAPI's 422 header error; a bad key is 401 with WWW-Authenticate", async () => {
    const missing = await h().request({ method: "POST", url: "/threads", payload: {} });
    assert.equal(missing.status, 422);
    assert.deepEqual(missing.json(), { detail: [{ type: "missing", loc: ["header", "authorization"], msg: "Field required", input: null }] });
    const bad = await h().request({ method: "GET", url: "/threads/x", headers: { authorization: "sk_nope" } });
    assert.equal(bad.status, 401);
    assert.equal(bad.headers["www-authenticate"], "Bearer");
  });

  test("another organization's thread is a 404, indistinguishable from a missing one", async () => {
    const first = await h().organization();
    const second = await h().organization();
    const threadId = await h().thread(first.apiKey);
    for (const url of [`/threads/${threadId}`, "/threads/does-not-exist"]) {
      const response = await h().request({ method: "GET", url, headers: { authorization: second.apiKey } });
      assert.equal(response.status, 404);
      assert.deepEqual(response.json(), { detail: "Thread not found" });
    }
    const token = await h().request({ method: "POST", url: `/threads/${threadId}/token`, headers: { authorization: second.apiKey } });
    assert.equal(token.status, 404);
  });

  test("a thread token opens its own thread only, and only where tokens are accepted", async () => {
    const { apiKey } = await h().organization();
    const threadId = await h().thread(apiKey);
    const otherThreadId = await h().thread(apiKey);
    const token = (await h().request({ method: "POST", url: `/threads/${threadId}/token`, headers: { authorization: apiKey } })).json<{ access_token: string }>().access_token;
    assert.equal((await h().request({ method: "GET", url: `/threads/${threadId}`, headers: { authorization: `Bearer ${token}` } })).status, 200);
    const foreign = await h().request({ method: "GET", url: `/threads/${otherThreadId}`, headers: { authorization: token } });
    assert.equal(foreign.status, 403);
    const orgLevel = await h().request({ method: "POST", url: "/threads", headers: { authorization: token }, payload: {} });
    assert.equal(orgLevel.status, 403);
    const minting = await h().request({ method: "POST", url: `/threads/${threadId}/token`, headers: { authorization: token } });
    assert.equal(minting.status, 403);
  });

  test("expired, tampered, unsigned and wrongly signed tokens are refused with 401", async () => {
    const { apiKey, organizationId } = await h().organization();
    const threadId = await h().thread(apiKey);
    const secret = new TextEncoder().encode(testSecrets.JWT_SECRET);
    const now = Math.floor(Date.now() / 1000);
    const claims = { org: organizationId, scope: "thread", sub: threadId, jti: "j1" };
    const expired = await new SignJWT(claims).setProtectedHeader({ alg: "HS256" }).setIssuedAt(now - 7200).setExpirationTime(now - 3600).sign(secret);
    const notYet = await new SignJWT(claims).setProtectedHeader({ alg: "HS256" }).setIssuedAt(now).setNotBefore(now + 3600).setExpirationTime(now + 7200).sign(secret);
    const wrongKey = await new SignJWT(claims).setProtectedHeader({ alg: "HS256" }).setIssuedAt(now).setExpirationTime(now + 60).sign(new TextEncoder().encode("another-secret-another-secret-1234"));
    const valid = await new SignJWT(claims).setProtectedHeader({ alg: "HS256" }).setIssuedAt(now).setExpirationTime(now + 60).sign(secret);
    const [header, payload, signature] = valid.split(".");
    const tampered = `${header}.${Buffer.from(JSON.stringify({ ...claims, sub: "other", iat: now, exp: now + 60 })).toString("base64url")}.${signature}`;
    const unsigned = `${Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url")}.${payload}.`;
    const hs512 = await new SignJWT(claims).setProtectedHeader({ alg: "HS512" }).setIssuedAt(now).setExpirationTime(now + 60).sign(secret);
    for (const token of [expired, notYet, wrongKey, tampered, unsigned, hs512]) {
      const response = await h().request({ method: "GET", url: `/threads/${threadId}`, headers: { authorization: token } });
      assert.equal(response.status, 401, token);
    }
    assert.equal((await h().request({ method: "GET", url: `/threads/${threadId}`, headers: { authorization: valid } })).status, 200);
  });
  test("a thread is found by its alias, which PATCH sets, moves and clears; a taken alias is 409 and changes nothing", async () => {
    const { apiKey } = await h().organization();
    const call = (method: "GET" | "PATCH", url: string, payload?: object) => h().request({ method, url, headers: { authorization: apiKey }, ...(payload ? { payload } : {}) });
    const first = await h().thread(apiKey, { alias: "+14155550123" });
    const second = await h().thread(apiKey);
    const found = await call("GET", "/threads/by-alias/+14155550123");
    assert.equal(found.status, 200, found.body);
    assert.deepEqual(found.json(), (await call("GET", `/threads/${first}`)).json());
    assert.deepEqual((await call("GET", "/threads/by-alias/nobody")).json(), { detail: "Thread not found" });
    assert.equal((await call("GET", "/threads/by-alias/nobody")).status, 404);

    const taken = await call("PATCH", `/threads/${second}`, { alias: "+14155550123" });
    assert.deepEqual([taken.status, taken.json()], [409, { detail: 'A thread with alias "+14155550123" already exists' }]);
    assert.equal((await call("GET", `/threads/${second}`)).json<{ alias: string | null }>().alias, null);

    const cleared = await call("PATCH", `/threads/${first}`, { alias: null });
    assert.deepEqual([cleared.status, cleared.json<{ id: string; alias: string | null }>().alias], [200, null]);
    assert.equal((await call("GET", "/threads/by-alias/+14155550123")).status, 404);
    const moved = await call("PATCH", `/threads/${second}`, { alias: "+14155550123" });
    assert.deepEqual(moved.json(), (await call("GET", `/threads/${second}`)).json());
    assert.equal(moved.json<{ alias: string }>().alias, "+14155550123");
    assert.equal((await call("GET", "/threads/by-alias/%2B14155550123")).json<{ id: string }>().id, second);
    assert.equal((await call("PATCH", `/threads/${second}`, { alias: "+14155550123" })).status, 200, "setting a thread's own alias again is no conflict");
    assert.deepEqual((await call("PATCH", `/threads/${uuidv7()}`, { alias: "x" })).json(), { detail: "Thread not found" });
  });

  test("bad alias input is 422 at its place", async () => {
    const { apiKey } = await h().organization();
    const threadId = await h().thread(apiKey);
    const patch = (payload: object) => h().request({ method: "PATCH", url: `/threads/${threadId}`, headers: { authorization: apiKey }, payload });
    for (const [payload, loc] of [
      [{}, ["body", "alias"]],
      [{ alias: "" }, ["body", "alias"]],
      [{ alias: 5 }, ["body", "alias"]],
      [{ alias: "x".repeat(201) }, ["body", "alias"]],
    ] as const) {
      const answer = await patch(payload);
      assert.equal(answer.status, 422, `${JSON.stringify(payload)}: ${answer.body}`);
      assert.deepEqual(answer.json<{ detail: { loc: unknown }[] }>().detail[0]!.loc, loc, answer.body);
    }
    const long = await h().request({ method: "GET", url: `/threads/by-alias/${"x".repeat(201)}`, headers: { authorization: apiKey } });
    assert.equal(long.status, 422, long.body);
    assert.deepEqual(long.json<{ detail: { loc: unknown }[] }>().detail[0]!.loc, ["path", "alias"]);
  });

  test("alias endpoints take an API key only, and see only the caller's organization", async () => {
    const mine = await h().organization();
    const theirs = await h().organization();
    const theirThread = await h().thread(theirs.apiKey, { alias: "shared-name" });
    const myThread = await h().thread(mine.apiKey);
    const as = (apiKey: string, method: "GET" | "PATCH", url: string, payload?: object) =>
      h().request({ method, url, headers: { authorization: apiKey }, ...(payload ? { payload } : {}) });
    assert.deepEqual((await as(mine.apiKey, "GET", "/threads/by-alias/shared-name")).json(), { detail: "Thread not found" });
    assert.deepEqual((await as(mine.apiKey, "PATCH", `/threads/${theirThread}`, { alias: "stolen" })).json(), { detail: "Thread not found" });
    const sameName = await as(mine.apiKey, "PATCH", `/threads/${myThread}`, { alias: "shared-name" });
    assert.equal(sameName.status, 200, "an alias is unique within an organization, not across them");
    assert.equal((await as(theirs.apiKey, "GET", "/threads/by-alias/shared-name")).json<{ id: string }>().id, theirThread);
    assert.equal((await as(mine.apiKey, "GET", "/threads/by-alias/shared-name")).json<{ id: string }>().id, myThread);

    const token = (await h().request({ method: "POST", url: `/threads/${myThread}/token`, headers: { authorization: mine.apiKey } })).json<{ access_token: string }>().access_token;
    const withToken = (method: "GET" | "PATCH", url: string, payload?: object) =>
      h().request({ method, url, headers: { authorization: `Bearer ${token}` }, ...(payload ? { payload } : {}) });
    assert.equal((await withToken("GET", "/threads/by-alias/shared-name")).status, 403);
    assert.equal((await withToken("PATCH", `/threads/${myThread}`, { alias: "by-token" })).status, 403);
  });

  test("concurrent claims of one alias: exactly one thread gets it", async () => {
    const { apiKey } = await h().organization();
    const threads = await Promise.all(Array.from({ length: 6 }, () => h().thread(apiKey)));
    const answers = await Promise.all(
      threads.map((threadId) => h().request({ method: "PATCH", url: `/threads/${threadId}`, headers: { authorization: apiKey }, payload: { alias: "+14155550999" } })),
    );
    assert.deepEqual(answers.map((answer) => answer.status).sort(), [200, 409, 409, 409, 409, 409]);
    const winner = threads[answers.findIndex((answer) => answer.status === 200)];
    const found = await h().request({ method: "GET", url: "/threads/by-alias/+14155550999", headers: { authorization: apiKey } });
    assert.equal(found.json<{ id: string }>().id, winner);
  });
});
