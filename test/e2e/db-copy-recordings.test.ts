import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import pino from "pino";
import { createApp, type App } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { createPostgresDatabase, openedDatabases } from "../support/databases.js";
import { adminKey, injector, testSecrets } from "../support/harness.js";
import { startObjectStore, type ObjectStore } from "../support/object-store.js";
import { processed, testVoiceSettings, voiceConfig, waitForCall } from "../voice-calls/support.js";

const run = promisify(execFile);

async function startApp(env: Record<string, string>): Promise<App> {
  const config = loadConfig({ ADMIN_API_KEY: adminKey, ...testSecrets, LOG_LEVEL: "silent", SHUTDOWN_GRACE_MS: "500", ...env });
  const app = await createApp(config, { logger: pino({ level: "silent" }), voice: testVoiceSettings });
  await app.server.ready();
  return app;
}

describe("parley db copy with RECORDINGS_URL: the recordings go to the object store", { skip: !openedDatabases().some((database) => database.name === "postgres") && "PostgreSQL not reachable" }, () => {
  let store: ObjectStore;
  let dataDir = "";
  before(async () => {
    store = await startObjectStore();
    dataDir = await mkdtemp(path.join(tmpdir(), "parley-copy-recordings-"));
  });
  after(async () => {
    await store.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  test("a call recorded in the data folder is served from the object store by a Parley on the copy", { timeout: 180_000 }, async () => {
    const source = await startApp({ DATA_DIR: dataDir });
    const request = injector(source);
    const admin = { authorization: `Bearer ${adminKey}` };
    const org = (await request({ method: "POST", url: "/admin/organizations", headers: admin, payload: { name: "Recorded" } })).json<{ id: string; api_key: string }>();
    const project = (await request({ method: "POST", url: `/admin/organizations/${org.id}/projects`, headers: admin, payload: { name: "support", config: voiceConfig } })).json<{ id: string }>();
    const threadId = (await request({ method: "POST", url: "/threads", headers: { authorization: org.api_key }, payload: {} })).json<{ thread_id: string }>().thread_id;
    const placed = await request({ method: "POST", url: `/voice/${threadId}/phone-call`, headers: { authorization: org.api_key }, payload: { callee: "+14155552671", project_id: project.id } });
    assert.equal(placed.status, 200, placed.body);
    const callId = placed.json<{ id: string }>().id;
    assert.ok((await waitForCall(request, org.api_key, callId, processed, 60_000)).recording_url, "the call has a recording");
    await source.close();
    const recorded = await readFile(path.join(dataDir, "recordings", `${callId}.wav`));

    const targetUrl = await createPostgresDatabase();
    const s3 = store.env("copied");
    const copied = await run(process.execPath, ["bin/parley.js", "db", "copy", "--from", dataDir, "--to", targetUrl], { env: { ...process.env, ...s3 } });
    assert.match(copied.stderr, new RegExp(`copied recordings: 1 \\(\\d+\\.\\d MB\\) to s3://${store.bucket}/copied/`));
    assert.match(copied.stdout, /recordings\/ {4}copied too: 1 recordings in s3:\/\/recordings\/copied\//);

    // A fresh data folder: the recording can only come from the object store.
    const elsewhere = await mkdtemp(path.join(tmpdir(), "parley-copy-recordings-target-"));
    const target = await startApp({ DATA_DIR: elsewhere, DATABASE_URL: targetUrl, ...s3 });
    try {
      const detail = (await injector(target)({ method: "GET", url: `/calls/${callId}`, headers: { authorization: org.api_key } })).json<{ recording_url: string }>();
      assert.equal(new URL(detail.recording_url).pathname, `/${store.bucket}/copied/${callId}.wav`);
      const served = await fetch(detail.recording_url);
      assert.equal(served.status, 200);
      assert.deepEqual(Buffer.from(await served.arrayBuffer()), recorded);
    } finally {
      await target.close();
      await rm(elsewhere, { recursive: true, force: true });
    }
  });

  test("a malformed RECORDINGS_URL stops the command before anything is copied", async () => {
    const refused = await run(process.execPath, ["bin/parley.js", "db", "copy", "--from", dataDir, "--to", "postgres://127.0.0.1/x"], {
      env: { ...process.env, RECORDINGS_URL: "https://not-s3.example/x" },
    }).catch((error: { code: number; stderr: string }) => error);
    assert.equal((refused as { code: number }).code, 1);
    assert.match((refused as { stderr: string }).stderr, /invalid setting: RECORDINGS_URL must be s3:\/\/bucket/);
  });
});
