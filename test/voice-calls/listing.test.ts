import assert from "node:assert/strict";
import { test } from "node:test";
import { voiceConfig, voiceSuite, waitForCall, type CallDetail } from "./support.js";
import { forEachDatabase, type Harness } from "../support/harness.js";

interface Page {
  calls: CallDetail[];
  pagination: { cursor: string | null };
}

async function list(h: Harness, apiKey: string, query: string) {
  return h.request({ method: "GET", url: `/calls${query}`, headers: { authorization: apiKey } });
}

forEachDatabase("listing and reading calls", (h) => {
  async function scheduled(apiKey: string, projectId: string, threadId: string) {
    const response = await h().request({
      method: "POST",
      url: `/voice/${threadId}/phone-call`,
      headers: { authorization: apiKey },
      payload: { callee: "+14155552671", project_id: projectId, scheduled_for: new Date(Date.now() + 3_600_000).toISOString() },
    });
    assert.equal(response.status, 200, response.body);
    return response.json<{ id: string }>().id;
  }

  test("calls are listed newest first, every filter narrows the list, and the cursor walks each call once", async () => {
    const { apiKey, projectId } = await h().organization();
    const threads = await Promise.all(Array.from({ length: 5 }, () => h().thread(apiKey)));
    const ids: string[] = [];
    for (const threadId of threads) ids.push(await scheduled(apiKey, projectId, threadId));
    const web = await h().request({ method: "POST", url: `/voice/${threads[0]}/web-call`, headers: { authorization: apiKey }, payload: { project_id: projectId } });
    assert.equal(web.status, 200);

    const everything = (await list(h(), apiKey, "?limit=100")).json<Page>();
    assert.equal(everything.calls.length, 6);
    assert.equal(everything.pagination.cursor, null);
    assert.deepEqual(everything.calls.slice(1).map((call) => call.id), [...ids].reverse());
    const keys = Object.keys(everything.calls[1]!).sort();
    assert.deepEqual(keys, [
      "call_type", "conversation_id", "created_at", "direction", "disconnection_reason", "duration_ms", "end_timestamp",
      "from_number", "id", "scheduled_for", "start_timestamp", "status", "thread_id", "to_number",
    ]);

    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: Page = (await list(h(), apiKey, `?limit=2${cursor ? `&cursor=${cursor}` : ""}`)).json<Page>();
      assert.ok(page.calls.length <= 2);
      seen.push(...page.calls.map((call) => call.id));
      cursor = page.pagination.cursor;
    } while (cursor);
    assert.deepEqual(seen, everything.calls.map((call) => call.id));

    const ofType = (await list(h(), apiKey, "?call_type=web_call")).json<Page>();
    assert.deepEqual(ofType.calls.map((call) => call.call_type), ["web_call"]);
    assert.equal((await list(h(), apiKey, "?status=scheduled&status=ended")).json<Page>().calls.length, 5);
    assert.equal((await list(h(), apiKey, "?direction=outbound")).json<Page>().calls.length, 5);
    assert.equal((await list(h(), apiKey, "?direction=inbound")).json<Page>().calls.length, 0);
    assert.deepEqual((await list(h(), apiKey, `?thread_id=${threads[1]}`)).json<Page>().calls.map((call) => call.id), [ids[1]]);
    assert.equal((await list(h(), apiKey, "?project_name=support")).json<Page>().calls.length, 6);
    assert.equal((await list(h(), apiKey, "?project_name=other")).json<Page>().calls.length, 0);
    const today = new Date().toISOString().slice(0, 10);
    assert.equal((await list(h(), apiKey, `?from_date=${today}&to_date=${today}`)).json<Page>().calls.length, 6);
    assert.equal((await list(h(), apiKey, `?from_date=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).json<Page>().calls.length, 0);
    assert.equal((await list(h(), apiKey, `?to_date=${encodeURIComponent(everything.calls[5]!.created_at)}`)).json<Page>().calls.length, 1);
    assert.equal((await list(h(), apiKey, "?to_date=2000-01-01")).json<Page>().calls.length, 0);
  });

  test("another organization sees none of the calls", async () => {
    const { apiKey, projectId } = await h().organization();
    const other = await h().organization();
    const threadId = await h().thread(apiKey);
    const id = await scheduled(apiKey, projectId, threadId);
    assert.deepEqual((await h().request({ method: "GET", url: `/calls/${id}`, headers: { authorization: other.apiKey } })).json(), { detail: "Call not found" });
    assert.equal((await h().request({ method: "GET", url: `/calls/${id}`, headers: { authorization: other.apiKey } })).status, 404);
    assert.deepEqual((await list(h(), other.apiKey, "")).json(), { calls: [], pagination: { cursor: null } });
    assert.deepEqual((await list(h(), other.apiKey, `?thread_id=${threadId}`)).json<Page>().calls, []);
    const deleted = await h().request({ method: "DELETE", url: `/voice/${threadId}/phone-call`, headers: { authorization: other.apiKey } });
    assert.deepEqual(deleted.json(), { detail: "Thread not found" });
    const created = await h().request({
      method: "POST",
      url: `/voice/${threadId}/phone-call`,
      headers: { authorization: other.apiKey },
      payload: { callee: "+14155552671", project_id: other.projectId },
    });
    assert.deepEqual(created.json(), { detail: "Thread not found" });
    const token = await h().threadToken(apiKey, threadId);
    assert.equal((await h().request({ method: "GET", url: `/calls/${id}`, headers: { authorization: token } })).status, 403);
    const still = await waitForCall(h().request, apiKey, id, () => true);
    assert.equal(still.status, "scheduled");
  });

  test("a call's detail shows its live transcript while it runs", async () => {
    const { apiKey, projectId } = await h().organization({
      ...voiceConfig,
      voice: { ...voiceConfig.voice, simulated: { script: ["Hello?", "What are your opening hours?", "Hmm", "Bye"], ring_ms: 10, turn_ms: 300 } },
    });
    const threadId = await h().thread(apiKey);
    const created = await h().request({
      method: "POST",
      url: `/voice/${threadId}/phone-call`,
      headers: { authorization: apiKey },
      payload: { callee: "+14155552671", project_id: projectId },
    });
    const live = await waitForCall(h().request, apiKey, created.json<{ id: string }>().id, (c) => c.status === "ongoing" && c.transcript !== null);
    assert.match(live.transcript ?? "", /^User: Hello\?/);
    assert.equal(live.recording_url, null);
    assert.equal(live.transcript_object, null);
    assert.equal(live.end_timestamp, null);
    await h().request({ method: "DELETE", url: `/voice/${threadId}/phone-call`, headers: { authorization: apiKey } });
  });
}, voiceSuite());
