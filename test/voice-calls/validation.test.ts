import assert from "node:assert/strict";
import { test } from "node:test";
import { accountId, secondAccountId, voiceConfig, voiceSuite } from "./support.js";
import { forEachDatabase } from "../support/harness.js";

interface Issue {
  type: string;
  loc: (string | number)[];
  msg: string;
  input: unknown;
  ctx?: Record<string, unknown>;
}

const twoNumbers = {
  ...voiceConfig,
  voice: {
    ...voiceConfig.voice,
    accounts: [
      { id: accountId, phone_numbers: ["+14155550100"] },
      { id: secondAccountId, phone_numbers: ["+14155550199"] },
    ],
  },
};

forEachDatabase("request validation of calls", (h) => {
  async function phoneCall(apiKey: string, threadId: string, payload: unknown) {
    return h().request({ method: "POST", url: `/voice/${threadId}/phone-call`, headers: { authorization: apiKey }, payload: payload as Record<string, unknown> });
  }

  test("an invalid callee is a 422 value_error at body.callee", async () => {
    const { apiKey, projectId } = await h().organization();
    const threadId = await h().thread(apiKey);
    const response = await phoneCall(apiKey, threadId, { callee: "12345", project_id: projectId });
    assert.equal(response.status, 422);
    assert.equal(
      response.body,
      JSON.stringify({
        detail: [
          {
            type: "value_error",
            loc: ["body", "callee"],
            msg: "Value error, invalid phone number: use E.164 (+14155552671) or an international number with its country code",
            input: "12345",
            ctx: { error: {} },
          },
        ],
      }),
    );
    for (const callee of ["(415) 555-2671", "+1 415", "call me", ""]) {
      assert.equal((await phoneCall(apiKey, threadId, { callee, project_id: projectId })).status, 422, callee);
    }
    for (const callee of ["14155552671", "0044 20 7946 0958", "+44 20 7946 0958"]) {
      const accepted = await phoneCall(apiKey, threadId, { callee, project_id: projectId, scheduled_for: new Date(Date.now() + 60_000).toISOString() });
      assert.equal(accepted.status, 200, `${callee}: ${accepted.body}`);
      await h().request({ method: "DELETE", url: `/voice/${threadId}/phone-call`, headers: { authorization: apiKey } });
    }
  });

  test("missing fields, a malformed project id and bad times are reported together, pydantic style", async () => {
    const { apiKey } = await h().organization();
    const threadId = await h().thread(apiKey);
    const missing = await phoneCall(apiKey, threadId, {});
    assert.deepEqual(missing.json(), {
      detail: [
        { type: "missing", loc: ["body", "callee"], msg: "Field required", input: {} },
        { type: "missing", loc: ["body", "project_id"], msg: "Field required", input: {} },
      ],
    });
    const malformed = await phoneCall(apiKey, threadId, { callee: "+14155552671", project_id: "nope", scheduled_for: "not a date", voice_provider_account_id: 7 });
    assert.deepEqual(
      malformed.json<{ detail: Issue[] }>().detail.map((issue) => [issue.type, issue.loc]),
      [
        ["uuid_parsing", ["body", "project_id"]],
        ["datetime_from_date_parsing", ["body", "scheduled_for"]],
        ["uuid_type", ["body", "voice_provider_account_id"]],
      ],
    );
    const past = await phoneCall(apiKey, threadId, { callee: "12", project_id: "00000000-0000-4000-8000-000000000000", scheduled_for: "2020-01-01T00:00:00Z" });
    assert.deepEqual(past.json(), {
      detail: [
        {
          type: "value_error",
          loc: ["body", "callee"],
          msg: "Value error, invalid phone number: use E.164 (+14155552671) or an international number with its country code",
          input: "12",
          ctx: { error: {} },
        },
        { type: "value_error", loc: ["body", "scheduled_for"], msg: "Value error, scheduled_for must be in the future", input: "2020-01-01T00:00:00Z", ctx: { error: {} } },
      ],
    });
    const noHeader = await h().request({ method: "POST", url: `/voice/${threadId}/phone-call`, payload: {} });
    assert.deepEqual(noHeader.json<{ detail: Issue[] }>().detail[0], { type: "missing", loc: ["header", "authorization"], msg: "Field required", input: null });
  });

  test("the from-number needs the account when the project has several numbers, and the account must be the project's", async () => {
    const { apiKey, projectId } = await h().organization(twoNumbers);
    const threadId = await h().thread(apiKey);
    const later = new Date(Date.now() + 60_000).toISOString();
    assert.deepEqual((await phoneCall(apiKey, threadId, { callee: "+14155552671", project_id: projectId })).json(), {
      detail: [
        {
          type: "value_error",
          loc: ["body", "voice_provider_account_id"],
          msg: "Value error, required: the project has several phone numbers, name the account to call from",
          input: null,
          ctx: { error: {} },
        },
      ],
    });
    const unknown = "11111111-2222-4333-8444-555555555555";
    assert.deepEqual((await phoneCall(apiKey, threadId, { callee: "+14155552671", project_id: projectId, voice_provider_account_id: unknown })).json(), {
      detail: [
        {
          type: "value_error",
          loc: ["body", "voice_provider_account_id"],
          msg: "Value error, not a voice provider account of this project",
          input: unknown,
          ctx: { error: {} },
        },
      ],
    });
    const chosen = await phoneCall(apiKey, threadId, { callee: "+14155552671", project_id: projectId, voice_provider_account_id: secondAccountId, scheduled_for: later });
    assert.equal(chosen.json<{ from_number: string }>().from_number, "+14155550199");
  });

  test("a project without phone numbers cannot place phone calls, and unknown threads and projects are 404", async () => {
    const { apiKey, projectId } = await h().organization({ ...voiceConfig, voice: { ...voiceConfig.voice, accounts: [] } });
    const other = await h().organization();
    const threadId = await h().thread(apiKey);
    const none = await phoneCall(apiKey, threadId, { callee: "+14155552671", project_id: projectId });
    assert.deepEqual(none.json<{ detail: Issue[] }>().detail.map((issue) => [issue.loc, issue.msg]), [
      [["body", "project_id"], "Value error, the project has no voice provider account with a phone number"],
    ]);
    assert.deepEqual((await phoneCall(apiKey, threadId, { callee: "+14155552671", project_id: other.projectId })).json(), { detail: "Project not found" });
    assert.deepEqual((await phoneCall(apiKey, "no-such-thread", { callee: "+14155552671", project_id: projectId })).json(), { detail: "Thread not found" });
    const token = await h().threadToken(apiKey, threadId);
    assert.equal((await phoneCall(token, threadId, { callee: "+14155552671", project_id: projectId })).status, 403);
  });

  test("GET /calls validates each repeated filter value, the dates, the limit and the cursor", async () => {
    const { apiKey } = await h().organization();
    const get = (query: string) => h().request({ method: "GET", url: `/calls${query}`, headers: { authorization: apiKey } });
    assert.equal(
      (await get("?status=ended&status=bogus")).body,
      JSON.stringify({
        detail: [
          {
            type: "literal_error",
            loc: ["query", "status", 1],
            msg: "Input should be 'queued', 'scheduled', 'ongoing', 'ended' or 'error'",
            input: "bogus",
            ctx: { expected: "'queued', 'scheduled', 'ongoing', 'ended' or 'error'" },
          },
        ],
      }),
    );
    const several = await get("?call_type=phone&direction=sideways&direction=inbound&from_date=yesterday&limit=0&cursor=!!!");
    assert.deepEqual(
      several.json<{ detail: Issue[] }>().detail.map((issue) => [issue.type, issue.loc]),
      [
        ["literal_error", ["query", "call_type", 0]],
        ["literal_error", ["query", "direction", 0]],
        ["datetime_from_date_parsing", ["query", "from_date"]],
        ["greater_than_equal", ["query", "limit"]],
      ],
    );
    assert.deepEqual((await get("?limit=101")).json(), {
      detail: [{ type: "less_than_equal", loc: ["query", "limit"], msg: "Input should be less than or equal to 100", input: "101", ctx: { le: 100 } }],
    });
    assert.deepEqual((await get("?cursor=bm90LWEtY3Vyc29y")).json(), {
      detail: [{ type: "value_error", loc: ["query", "cursor"], msg: "Value error, Invalid cursor", input: "bm90LWEtY3Vyc29y", ctx: { error: {} } }],
    });
    assert.equal((await get("?status=ended&call_type=web_call&direction=inbound&from_date=2024-01-01&to_date=2024-01-01T10:00:00Z")).status, 200);
  });
}, voiceSuite());
