import assert from "node:assert/strict";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { createPostgresDatabase, openedDatabases } from "../support/databases.js";
import { adminKey } from "../support/harness.js";
import { startObjectStore, type ObjectStore } from "../support/object-store.js";
import { call, startServerProcess, waitUntil, type ServerProcess } from "../support/processes.js";

const postgresAvailable = openedDatabases().some((database) => database.name === "postgres");

describe("recordings in object storage, shared by instances on one PostgreSQL", { skip: !postgresAvailable && "PostgreSQL not reachable" }, () => {
  let store: ObjectStore;
  let databaseUrl = "";
  let root = "";
  const servers: ServerProcess[] = [];
  const start = async (name: string) => {
    // A data folder of its own for each instance: nothing is shared through the disk.
    const server = await startServerProcess(databaseUrl, { ...store.env("prod/recordings"), DATA_DIR: path.join(root, name), RECORDING_URL_TTL_SECONDS: "900" });
    servers.push(server);
    return server;
  };

  before(async () => {
    store = await startObjectStore();
    databaseUrl = await createPostgresDatabase();
    root = await mkdtemp(path.join(tmpdir(), "parley-recordings-s3-"));
  });
  after(async () => {
    await Promise.all(servers.map((server) => server.stop()));
    await store.stop();
    await rm(root, { recursive: true, force: true });
  });

  test("a call recorded by one instance is played, whole and by byte ranges, through another", { timeout: 180_000 }, async () => {
    const recorder = await start("recorder");
    const org = await call(recorder.url, "POST", "/admin/organizations", `Bearer ${adminKey}`, { name: "Recordings" });
    const { id: organizationId, api_key: apiKey } = org.json<{ id: string; api_key: string }>();
    const project = await call(recorder.url, "POST", `/admin/organizations/${organizationId}/projects`, `Bearer ${adminKey}`, {
      name: "support",
      config: {
        agent: { knowledge: [{ question: "opening hours", answer: "Nine to five." }] },
        voice: {
          accounts: [{ id: "6f1c1f9e-2d7a-4d2b-9a51-3c1b7f0e5a10", phone_numbers: ["+14155550100"] }],
          simulated: { script: ["What are your opening hours?", "Bye."], ring_ms: 20, turn_ms: 30 },
        },
      },
    });
    assert.equal(project.status, 201, project.text);
    const threadId = (await call(recorder.url, "POST", "/threads", apiKey, {})).json<{ thread_id: string }>().thread_id;
    const created = await call(recorder.url, "POST", `/voice/${threadId}/phone-call`, apiKey, { callee: "+14155552671", project_id: project.json<{ id: string }>().id });
    assert.equal(created.status, 200, created.text);
    const callId = created.json<{ id: string }>().id;
    await waitUntil(async () => (await call(recorder.url, "GET", `/calls/${callId}`, apiKey)).json<{ recording_url: string | null }>().recording_url !== null, 120_000, "the recording");

    // The second instance starts after the recording exists, and the first is gone before it is read.
    const reader = await start("reader");
    await recorder.stop();
    const detail = (await call(reader.url, "GET", `/calls/${callId}`, apiKey)).json<{ recording_url: string }>();
    const url = new URL(detail.recording_url);
    assert.equal(url.origin, store.endpoint, "the store's own URL, not Parley's");
    assert.equal(url.pathname, `/${store.bucket}/prod/recordings/${callId}.wav`);
    assert.equal(url.searchParams.get("X-Amz-Expires"), "900", "as long as RECORDING_URL_TTL_SECONDS");

    const whole = await fetch(url);
    assert.equal(whole.status, 200);
    const wav = Buffer.from(await whole.arrayBuffer());
    assert.equal(wav.subarray(0, 4).toString("latin1"), "RIFF");
    assert.equal(wav.subarray(8, 12).toString("latin1"), "WAVE");
    assert.ok(wav.length > 1000, `a recording of some length, got ${wav.length} bytes`);
    const part = await fetch(url, { headers: { range: "bytes=44-1043" } });
    assert.equal(part.status, 206);
    assert.equal(part.headers.get("content-range"), `bytes 44-1043/${wav.length}`);
    assert.deepEqual(Buffer.from(await part.arrayBuffer()), wav.subarray(44, 1044));

    for (const name of ["recorder", "reader"]) {
      const files = await readdir(path.join(root, name, "recordings")).catch(() => []);
      assert.deepEqual(files, [], `nothing written under ${name}'s DATA_DIR/recordings`);
    }
    for (const server of servers) assert.doesNotMatch(server.output(), /S3RVER/, "no credential in the servers' output");
  });
});
