import assert from "node:assert/strict";
import { test } from "node:test";
import { sleep, voiceSuite, waitForCall } from "./support.js";
import { forEachDatabase, injector, type Harness } from "../support/harness.js";

/** Messages the call left in the thread's history: one run of the three-line script leaves five. */
async function callMessages(h: Harness, apiKey: string, threadId: string, callId: string): Promise<number> {
  const page = await h.request({ method: "GET", url: `/threads/${threadId}/messages?limit=100`, headers: { authorization: apiKey } });
  return page.json<{ messages: { extras: Record<string, unknown> }[] }>().messages.filter((m) => m.extras.call_id === callId).length;
}

async function schedule(h: Harness, apiKey: string, projectId: string, threadId: string, inMs: number) {
  const scheduledFor = new Date(Date.now() + inMs);
  const response = await h.request({
    method: "POST",
    url: `/voice/${threadId}/phone-call`,
    headers: { authorization: apiKey },
    payload: { callee: "+14155552671", project_id: projectId, scheduled_for: scheduledFor.toISOString() },
  });
  assert.equal(response.status, 200, response.body);
  return { id: response.json<{ id: string; status: string }>().id, status: response.json<{ status: string }>().status, scheduledFor };
}

forEachDatabase("scheduled phone calls", (h) => {
  test("a scheduled call waits as scheduled, then runs once at its time", async () => {
    const { apiKey, projectId } = await h().organization();
    const threadId = await h().thread(apiKey);
    const scheduled = await schedule(h(), apiKey, projectId, threadId, 1200);
    assert.equal(scheduled.status, "scheduled");
    const waiting = await waitForCall(h().request, apiKey, scheduled.id, () => true);
    assert.equal(waiting.status, "scheduled");
    assert.equal(waiting.conversation_id, null);
    assert.equal(waiting.start_timestamp, null);
    const done = await waitForCall(h().request, apiKey, scheduled.id, (c) => c.status === "ended");
    assert.equal(done.disconnection_reason, "user_hangup");
    assert.ok(done.start_timestamp! >= Math.floor(scheduled.scheduledFor.getTime() / 1000));
    await sleep(1200);
    assert.equal(await callMessages(h(), apiKey, threadId, scheduled.id), 5);
  });

  test("a scheduled call survives a restart of the app and runs once", async () => {
    const first = await h().startApp();
    const { apiKey, projectId } = await h().organization();
    const threadId = await h().thread(apiKey);
    const firstRequest = injector(first);
    const scheduledFor = new Date(Date.now() + 1500);
    const created = await firstRequest({
      method: "POST",
      url: `/voice/${threadId}/phone-call`,
      headers: { authorization: apiKey },
      payload: { callee: "+14155552671", project_id: projectId, scheduled_for: scheduledFor.toISOString() },
    });
    const callId = created.json<{ id: string }>().id;
    await first.close();
    const restarted = await h().startApp();
    const done = await waitForCall(injector(restarted), apiKey, callId, (c) => c.status === "ended");
    assert.equal(done.disconnection_reason, "user_hangup");
    await sleep(1200);
    assert.equal(await callMessages(h(), apiKey, threadId, callId), 5);
  });
}, voiceSuite());

forEachDatabase(
  "scheduled phone calls on several instances",
  (h) => {
    test("two instances on one PostgreSQL start each scheduled call exactly once", async () => {
      const second = await h().startApp({ ownPool: true });
      const { apiKey, projectId } = await h().organization();
      const threads = await Promise.all(Array.from({ length: 6 }, () => h().thread(apiKey)));
      const calls = await Promise.all(threads.map((threadId, index) => schedule(h(), apiKey, projectId, threadId, 1000 + (index % 2) * 50)));
      for (const [index, call] of calls.entries()) {
        const done = await waitForCall(injector(second), apiKey, call.id, (c) => c.status === "ended");
        assert.equal(done.disconnection_reason, "user_hangup");
        assert.equal(await callMessages(h(), apiKey, threads[index]!, call.id), 5);
      }
      const rows = await h().database.db.query<{ started: number }>(
        "SELECT count(*)::int AS started FROM calls WHERE id = ANY($1::text[]) AND started_at IS NOT NULL",
        [calls.map((call) => call.id)],
      );
      assert.equal(rows[0]!.started, 6);
    });
  },
  voiceSuite({ only: "postgres" }),
);
