import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, test } from "node:test";
import { promisify } from "node:util";
import type { InjectOptions } from "fastify";
import pino from "pino";
import { createApp, type App } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import type { Db } from "../../src/domain/shared/database.js";
import { copyDatabase } from "../../src/store/database-copy.js";
import { migrate } from "../../src/store/migrate.js";
import { openPglite } from "../../src/store/pglite-db.js";
import { openPostgres } from "../../src/store/postgres-db.js";
import { createPostgresDatabase, openedDatabases } from "../support/databases.js";
import { knowledgeConfig } from "../support/fixtures.js";
import { adminKey, injector, testSecrets } from "../support/harness.js";
import { listen, processed, testVoiceSettings, TestSocket, voiceConfig, waitForCall } from "../voice-calls/support.js";

const run = promisify(execFile);

/** What a client can read of one organization's data, every response whole (recording URLs without their signature). */
interface Snapshot {
  responses: Record<string, { status: number; body: unknown }>;
  recording: string;
  events: Record<string, unknown[]>;
}

interface Seeded {
  apiKey: string;
  secondKey: string;
  revokedKey: string;
  projectId: string;
  threads: string[];
  calls: string[];
  scheduledCall: string;
}

/** The copy's page size in the paged test: every table below holds several pages of it. */
const pageRows = 2;

async function startApp(dataDir: string, databaseUrl?: string): Promise<App> {
  const config = loadConfig({
    ADMIN_API_KEY: adminKey,
    ...testSecrets,
    DATA_DIR: dataDir,
    LOG_LEVEL: "silent",
    SHUTDOWN_GRACE_MS: "500",
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
  });
  const app = await createApp(config, { logger: pino({ level: "silent" }), voice: testVoiceSettings });
  await app.server.ready();
  return app;
}

/** Every kind of row, made through the interface: organizations, keys (one revoked), projects and versions, threads, messages, conversations, calls with recordings and analysis, events, a scheduled call's job. */
async function seed(app: App): Promise<Seeded> {
  const request = injector(app);
  const admin = (method: InjectOptions["method"], url: string, payload?: unknown) =>
    request({ method, url, headers: { authorization: `Bearer ${adminKey}` }, ...(payload === undefined ? {} : { payload: payload as InjectOptions["payload"] }) });
  const org = (await admin("POST", "/admin/organizations", { name: "Copied org" })).json<{ id: string; api_key: string }>();
  await admin("POST", "/admin/organizations", { name: "Another org" });
  const project = (await admin("POST", `/admin/organizations/${org.id}/projects`, { name: "support", config: voiceConfig })).json<{ id: string }>();
  await admin("PUT", `/admin/projects/${project.id}/config`, { config: { ...voiceConfig, pricing: { voice_minute_usd: 0.06, message_usd: 0.002 } } });
  await admin("POST", `/admin/organizations/${org.id}/projects`, { name: "knowledge", config: knowledgeConfig });
  const secondKey = (await admin("POST", `/admin/organizations/${org.id}/api-keys`)).json<{ api_key: string }>().api_key;
  const revoked = (await admin("POST", `/admin/organizations/${org.id}/api-keys`)).json<{ id: string; api_key: string }>();
  assert.equal((await admin("DELETE", `/admin/api-keys/${revoked.id}`)).status, 204);
  const apiKey = org.api_key;

  const threads: string[] = [];
  for (const body of [{ project_name: "support" }, { project_name: "knowledge", alias: "customer-42" }, {}]) {
    const created = await request({ method: "POST", url: "/threads", headers: { authorization: apiKey }, payload: body });
    assert.equal(created.status, 200, created.body);
    threads.push(created.json<{ thread_id: string }>().thread_id);
  }
  const chat = async (threadId: string, message: string, extra: Record<string, unknown> = {}) => {
    const response = await request({ method: "POST", url: "/chat", headers: { authorization: apiKey }, payload: { thread_id: threadId, message, ...extra } });
    assert.equal(response.status, 200, response.body);
  };
  await chat(threads[0]!, "hello there", { service_config_name: "support" });
  await chat(threads[0]!, "What are your opening hours? Ünïcödé ✓", { service_config_name: "support" });
  await chat(threads[1]!, "Where is the office located?", { service_config_name: "knowledge" });
  const ended = await request({ method: "POST", url: "/legacy/end_conversation", headers: { authorization: `Bearer ${apiKey}` }, payload: { thread_id: threads[1] } });
  assert.equal(ended.status, 200, ended.body);
  await chat(threads[1]!, "and after the end?", { service_config_name: "knowledge" });

  // Enough rows for several pages of `pageRows` in every table, and runs of one leading key value (a thread's events
  // and conversations, a queue's jobs) of differing lengths, so that pages end inside a run and between runs.
  for (let index = 0; index < 3; index += 1) await admin("POST", "/admin/organizations", { name: `Neighbour ${index}` });
  for (let index = 0; index < 3; index += 1) await admin("POST", `/admin/organizations/${org.id}/projects`, { name: `desk-${index}`, config: knowledgeConfig });
  for (let length = 1; length <= 4; length += 1) {
    const threadId = (await request({ method: "POST", url: "/threads", headers: { authorization: apiKey }, payload: { project_name: "knowledge" } })).json<{ thread_id: string }>().thread_id;
    threads.push(threadId);
    for (let turn = 0; turn < length; turn += 1) {
      await chat(threadId, `question ${turn} of ${length}`, { service_config_name: "knowledge" });
      if (turn % 2 === 1) {
        const closed = await request({ method: "POST", url: "/legacy/end_conversation", headers: { authorization: `Bearer ${apiKey}` }, payload: { thread_id: threadId } });
        assert.equal(closed.status, 200, closed.body);
      }
    }
  }
  for (let run = 0; run < 5; run += 1) await chat(threads[0]!, `simulated caller ${run}`, { service_config_name: "support", simulate: { create: true, max_turns: 1 } });

  const calls: string[] = [];
  const phone = await request({ method: "POST", url: `/voice/${threads[0]}/phone-call`, headers: { authorization: apiKey }, payload: { callee: "+14155552671", project_id: project.id } });
  assert.equal(phone.status, 200, phone.body);
  calls.push(phone.json<{ id: string }>().id);
  const done = await waitForCall(request, apiKey, calls[0]!, processed, 60_000);
  assert.ok(done.recording_url, "the call has a recording");
  // An hour ahead: still waiting when the copy is made, however slow the machine. The copy must carry its job; the test
  // then brings the job forward on the target to see it run there. Its thread is left out of the comparison.
  const scheduledThread = (await request({ method: "POST", url: "/threads", headers: { authorization: apiKey }, payload: {} })).json<{ thread_id: string }>().thread_id;
  const scheduled = await request({
    method: "POST",
    url: `/voice/${scheduledThread}/phone-call`,
    headers: { authorization: apiKey },
    payload: { callee: "+14155552672", project_id: project.id, scheduled_for: new Date(Date.now() + 3_600_000).toISOString() },
  });
  assert.equal(scheduled.status, 200, scheduled.body);
  for (let index = 0; index < 4; index += 1) {
    const laterThread = (await request({ method: "POST", url: "/threads", headers: { authorization: apiKey }, payload: {} })).json<{ thread_id: string }>().thread_id;
    const later = await request({
      method: "POST",
      url: `/voice/${laterThread}/phone-call`,
      headers: { authorization: apiKey },
      payload: { callee: `+1415555268${index}`, project_id: project.id, scheduled_for: new Date(Date.now() + 7_200_000).toISOString() },
    });
    assert.equal(later.status, 200, later.body);
  }
  return { apiKey, secondKey, revokedKey: revoked.api_key, projectId: project.id, threads, calls, scheduledCall: scheduled.json<{ id: string }>().id };
}

function withoutCall(listing: { calls: { id: string }[] }, callId: string): unknown {
  return { ...listing, calls: listing.calls.filter((call) => call.id !== callId) };
}

async function snapshot(app: App, seeded: Seeded): Promise<Snapshot> {
  const request = injector(app);
  const key = { authorization: seeded.apiKey };
  const gets: [string, Record<string, string>][] = [
    [`/admin/projects/${seeded.projectId}`, { authorization: `Bearer ${adminKey}` }],
    ["/calls?limit=50", key],
    ...seeded.calls.map((id): [string, Record<string, string>] => [`/calls/${id}`, key]),
    ...seeded.threads.flatMap((id): [string, Record<string, string>][] => [
      [`/threads/${id}`, key],
      [`/threads/${id}/messages?limit=100`, { authorization: seeded.secondKey }],
      [`/threads/${id}/messages?limit=2&order=asc`, key],
      [`/threads/${id}/messages/search?query=opening`, key],
      [`/threads/${id}/messages/search?query=office`, key],
    ]),
    ["/threads/customer-42", key],
    [`/threads/${seeded.threads[0]}`, { authorization: seeded.revokedKey }],
  ];
  const responses: Snapshot["responses"] = {};
  let recording = "";
  for (const [url, headers] of gets) {
    const response = await request({ method: "GET", url, headers });
    const body = url.startsWith("/calls?") ? withoutCall(response.json<{ calls: { id: string }[] }>(), seeded.scheduledCall) : response.json<unknown>();
    const withoutSignature = JSON.parse(JSON.stringify(body, (name, value: unknown) => (name === "recording_url" && typeof value === "string" ? value.replace(/\?.*$/, "") : value)));
    responses[`${url} as ${headers.authorization}`] = { status: response.status, body: withoutSignature };
    const signed = (body as { recording_url?: string }).recording_url;
    if (signed && !recording) {
      const file = await app.server.inject({ method: "GET", url: new URL(signed, "http://localhost").pathname + new URL(signed, "http://localhost").search });
      assert.equal(file.statusCode, 200);
      recording = file.rawPayload.toString("base64");
    }
  }
  for (const threadId of seeded.threads) {
    const legacy = await request({ method: "POST", url: `/legacy/retrieve_conversations?thread_id=${threadId}`, headers: key });
    responses[`legacy ${threadId}`] = { status: legacy.status, body: legacy.json() };
  }
  const base = await listen(app);
  const events: Snapshot["events"] = {};
  for (const threadId of seeded.threads) {
    const [row] = await app.db.query<{ count: number }>("SELECT count(*)::int AS count FROM thread_events WHERE thread_id = $1", [threadId]);
    const count = row?.count ?? 0;
    const socket = await TestSocket.open(`${base}/threads/${threadId}/events?after=0`, key);
    const received: unknown[] = [];
    for (let index = 0; index < count; index += 1) received.push(await socket.next(() => true));
    socket.close();
    events[threadId] = received;
  }
  return { responses, recording, events };
}

/** The tables a copy carries (each migration's own bookkeeping is made by `migrate` on each side), as `schema.name`, each with its row count and a checksum of its rows' text. */
async function tableDigests(db: Db): Promise<Map<string, { rows: number; digest: string }>> {
  return db.transaction(async (tx) => {
    for (const setting of ["TimeZone = 'UTC'", "DateStyle = 'ISO, YMD'", "IntervalStyle = 'postgres'", "extra_float_digits = 3"]) await tx.query(`SET LOCAL ${setting}`);
    const tables = await tx.query<{ name: string }>(
      `SELECT table_schema || '.' || table_name AS name FROM information_schema.tables
        WHERE table_type = 'BASE TABLE' AND ((table_schema = 'public' AND table_name NOT IN ('schema_migrations', 'schema_functions'))
              OR (table_schema = 'pgboss' AND table_name IN ('queue', 'schedule', 'subscription', 'job', 'archive')))
        ORDER BY 1`,
    );
    const digests = new Map<string, { rows: number; digest: string }>();
    for (const { name } of tables) {
      const [schema, table] = name.split(".") as [string, string];
      const [row] = await tx.query<{ rows: number; digest: string }>(
        `SELECT count(*)::int AS rows, md5(coalesce(string_agg(md5(t::text), '' ORDER BY md5(t::text)), '')) AS digest FROM "${schema}"."${table}" t`,
      );
      digests.set(name, row!);
    }
    return digests;
  });
}

describe("parley db copy: the embedded database into PostgreSQL", () => {
  const withPostgres = openedDatabases().some((database) => database.name === "postgres");
  let dataDir = "";
  let seeded: Seeded;
  let sourceSnapshot: Snapshot;
  before(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "parley-copy-"));
    if (!withPostgres) return;
    const source = await startApp(dataDir);
    seeded = await seed(source);
    sourceSnapshot = await snapshot(source, seeded);
    const waiting = await waitForCall(injector(source), seeded.apiKey, seeded.scheduledCall, () => true);
    await source.close();
    assert.equal(waiting.status, "scheduled", "the scheduled call had not run before the copy");
  });
  after(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  test("copies every row with its ids; the API answers identically; a second copy into the filled database is refused", { skip: !withPostgres }, async () => {
    const targetUrl = await createPostgresDatabase();
    const copied = await run(process.execPath, ["bin/parley.js", "db", "copy", "--from", dataDir, "--to", targetUrl]);
    assert.match(copied.stdout, /Copied and verified/);
    for (const table of ["organizations", "api_keys", "projects", "project_config_versions", "threads", "conversations", "messages", "thread_events", "calls", "pgboss.queue", "pgboss.job"]) {
      assert.match(copied.stdout, new RegExp(`^  ${table.replace(".", "\\.")}\\s+[1-9]\\d* rows`, "m"), `${table} copied with rows`);
    }
    assert.match(copied.stderr, /copied messages: \d+ rows/);

    const target = await startApp(dataDir, targetUrl);
    try {
      const afterCopy = await snapshot(target, seeded);
      assert.deepEqual(afterCopy.responses, sourceSnapshot.responses);
      assert.equal(afterCopy.recording, sourceSnapshot.recording);
      assert.deepEqual(afterCopy.events, sourceSnapshot.events);
      // The scheduled call's job came along: brought forward, the call runs on PostgreSQL.
      const jobs = await target.db.query("UPDATE pgboss.job SET start_after = now() WHERE name = 'parley_call_start' AND data->>'callId' = $1 AND state = 'created' RETURNING id", [
        seeded.scheduledCall,
      ]);
      assert.equal(jobs.length, 1, "the scheduled call's job was copied");
      const ran = await waitForCall(injector(target), seeded.apiKey, seeded.scheduledCall, (call) => call.status === "ended");
      assert.equal(ran.disconnection_reason, "user_hangup");
    } finally {
      await target.close();
    }

    const refused = await run(process.execPath, ["bin/parley.js", "db", "copy", "--from", dataDir, "--to", targetUrl]).then(
      () => assert.fail("a copy into a filled database must fail"),
      (error: { code: number; stderr: string }) => error,
    );
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /the target database is not empty: .*\borganizations \(5 rows\).*nothing was copied/);
    const db = openPostgres(targetUrl, 1);
    try {
      const [row] = await db.query<{ count: number }>("SELECT count(*)::int AS count FROM organizations");
      assert.equal(row?.count, 5);
    } finally {
      await db.close();
    }
  });

  test("copies tables of several pages, runs of one leading key value included, every row once; the API reads them on PostgreSQL", { skip: !withPostgres }, async () => {
    const targetUrl = await createPostgresDatabase();
    const source = await openPglite(dataDir);
    const target = openPostgres(targetUrl, 2);
    try {
      await migrate(source);
      await migrate(target);
      await copyDatabase(source, target, { batchRows: pageRows });
      const [expected, actual] = [await tableDigests(source), await tableDigests(target)];
      assert.deepEqual(actual, expected, "every table has the same rows on both sides");
      // Every table the interface fills without a vendor; empty here: rate_limits (limits off), server_settings,
      // voice_webhook_deliveries (vendor webhooks) and pg-boss's archive, schedule and subscription.
      const filled = ["organizations", "api_keys", "projects", "project_config_versions", "threads", "conversations", "messages", "thread_events", "calls", "simulations"];
      for (const table of [...filled.map((name) => `public.${name}`), "pgboss.job"]) {
        const rows = expected.get(table)?.rows ?? 0;
        assert.ok(rows > 2 * pageRows, `${table} spans several pages of ${pageRows} (${rows} rows)`);
      }
    } finally {
      await target.close();
      await source.close();
    }
    const app = await startApp(dataDir, targetUrl);
    try {
      const afterCopy = await snapshot(app, seeded);
      assert.deepEqual(afterCopy.responses, sourceSnapshot.responses);
      assert.equal(afterCopy.recording, sourceSnapshot.recording);
      assert.deepEqual(afterCopy.events, sourceSnapshot.events);
    } finally {
      await app.close();
    }
  });

  test("refuses a folder that holds no database and a target that is not a PostgreSQL URL", async () => {
    const empty = await mkdtemp(path.join(tmpdir(), "parley-copy-empty-"));
    try {
      const missing = await run(process.execPath, ["bin/parley.js", "db", "copy", "--from", empty, "--to", "postgres://127.0.0.1/x"]).catch((error: { code: number; stderr: string }) => error);
      assert.equal((missing as { code: number }).code, 1);
      assert.match((missing as { stderr: string }).stderr, /holds no Parley embedded database/);
      const usage = await run(process.execPath, ["bin/parley.js", "db", "copy", "--from", empty]).catch((error: { stderr: string }) => error);
      assert.match((usage as { stderr: string }).stderr, /usage: parley db copy --from DATA_DIR --to/);
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });
});
