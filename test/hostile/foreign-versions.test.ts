import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { uuidv7 } from "../../src/domain/shared/ids.js";
import { startFakeOpenAi, type FakeLlmServer } from "../support/fake-llm-servers.js";
import { forEachDatabase, type TestResponse } from "../support/harness.js";

const vault = { question: "What is the vault code?", answer: "The vault code is 7341." };

/**
 * `config_version_id` on POST /chat names a version of the project that the request names, in the caller's
 * organization. A version of another organization's project, or of another project of one's own, is the 404 of a
 * version that does not exist, whether or not it is cached (issue 21: it once answered from the cache with the other
 * organization's knowledge, and sent its model key to its model endpoint).
 */
forEachDatabase("configuration versions of another project", (h) => {
  let model: FakeLlmServer;
  let theirs: { apiKey: string; versionId: string; modelVersionId: string };
  let mine: { apiKey: string; threadId: string; otherVersionId: string };

  before(async () => {
    model = await startFakeOpenAi({ chunks: ["Their", " model"] });
    const them = await h().organization({ agent: { knowledge: [vault] } }, "support");
    const theirModel = await h().admin("POST", `/admin/organizations/${them.organizationId}/projects`, {
      name: "modelled",
      config: { agent: { provider: "openai", model: "m", base_url: model.url, api_key: "their-secret-model-key" } },
    });
    assert.equal(theirModel.status, 201, theirModel.body);
    const theirProject = await h().admin("GET", `/admin/projects/${them.projectId}`);
    theirs = {
      apiKey: them.apiKey,
      versionId: theirProject.json<{ config_version_id: string }>().config_version_id,
      modelVersionId: theirModel.json<{ config_version_id: string }>().config_version_id,
    };
    // Their versions are read once by their own chats, so that each is in every cache that keeps versions.
    const theirThread = await h().thread(them.apiKey);
    for (const [name, versionId] of [["support", theirs.versionId], ["modelled", theirs.modelVersionId]] as const) {
      const payload = { thread_id: theirThread, message: vault.question, service_config_name: name, config_version_id: versionId };
      const own = await h().request({ method: "POST", url: "/chat", headers: { authorization: them.apiKey }, payload });
      assert.equal(own.status, 200, own.body);
    }
    const me = await h().organization({}, "support");
    const other = await h().admin("POST", `/admin/organizations/${me.organizationId}/projects`, { name: "other", config: { agent: { knowledge: [vault] } } });
    assert.equal(other.status, 201, other.body);
    mine = { apiKey: me.apiKey, threadId: await h().thread(me.apiKey), otherVersionId: other.json<{ config_version_id: string }>().config_version_id };
    const ownOther = await h().request({
      method: "POST",
      url: "/chat",
      headers: { authorization: me.apiKey },
      payload: { thread_id: mine.threadId, message: vault.question, service_config_name: "other", config_version_id: mine.otherVersionId },
    });
    assert.equal(ownOther.status, 200, ownOther.body);
  });
  after(() => model.close());

  const chat = (body: Record<string, unknown>): Promise<TestResponse> =>
    h().request({
      method: "POST",
      url: "/chat",
      headers: { authorization: mine.apiKey },
      payload: { thread_id: mine.threadId, message: vault.question, service_config_name: "support", ...body },
    });

  const variants: [string, Record<string, unknown>][] = [
    ["whole", {}],
    ["streamed", { streaming: true }],
    ["simulated", { simulate: { max_turns: 1, create: true, evaluate: true } }],
  ];

  for (const [mode, extra] of variants) {
    test(`a ${mode} chat with another organization's version is the 404 of an unknown version, and reaches neither their knowledge nor their model`, async () => {
      const requestsBefore = model.requests.length;
      const unknown = await chat({ ...extra, config_version_id: uuidv7() });
      assert.deepEqual([unknown.status, unknown.json()], [404, { detail: "Configuration version not found" }]);
      for (const versionId of [theirs.versionId, theirs.modelVersionId]) {
        const foreign = await chat({ ...extra, config_version_id: versionId });
        assert.deepEqual([foreign.status, foreign.json()], [unknown.status, unknown.json()], foreign.body);
        assert.ok(!foreign.body.includes("7341"), foreign.body);
      }
      assert.equal(model.requests.length, requestsBefore, "their model endpoint was called");
    });

    test(`a ${mode} chat with a version of another project of the same organization is the same 404`, async () => {
      const crossed = await chat({ ...extra, config_version_id: mine.otherVersionId });
      assert.deepEqual([crossed.status, crossed.json()], [404, { detail: "Configuration version not found" }], crossed.body);
    });
  }

  test("the thread that was probed holds only the one chat its own project answered", async () => {
    const history = await h().request({ method: "GET", url: `/threads/${mine.threadId}/messages`, headers: { authorization: mine.apiKey } });
    assert.equal(history.json<{ messages: unknown[] }>().messages.length, 2, history.body);
  });
});
