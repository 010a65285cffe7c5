import assert from "node:assert/strict";
import { mkdir, mkdtemp, readFile, rm } from "node:fs/promises";
import path from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { demoProjectConfig } from "../../src/domain/organizations/first-start.js";
import { parseDocBlocks, readDocFiles, runDocument, type DocFile, type DocRun } from "../support/doc-blocks.js";
import { forEachDatabase, type Harness } from "../support/harness.js";
import { freePort } from "../support/processes.js";

/**
 * Every block of README.md, docs/ and the packages' READMEs that a reader would run is run here, as written, in its
 * document's order, against a server with the default settings (real audio in calls, as `npm start` has) and a fresh
 * organization whose demo project is the first start's. The environment is what the first start tells a reader to
 * set: `KEY`, `PROJECT` and `PORT`; plus `SITE_PORT`, a free port for a document's own web server. Blocks that cannot
 * run say why beside them (see test/support/doc-blocks.ts for the markers).
 */

const root = fileURLToPath(new URL("../../", import.meta.url));
const docs = await readDocFiles(root);

/** What some documents' examples must show, beyond running without an error. */
const expectations: Record<string, (run: DocRun, cwd: string) => Promise<void>> = {
  "README.md": async (run, cwd) => {
    for (const expected of [
      '"message":"We are open Monday to Friday, 9 am to 5 pm."',
      '"message":"Your name is Ada."',
      '{"token":"A ","index":0}',
      "event: token",
      '"message":"Thank you: Tuesday at 3 pm, noted in this conversation.',
      '"status": "ended"',
      "agent: We are open Monday to Friday, 9 am to 5 pm.",
      "call ended: user_hangup",
    ]) {
      assert.ok(run.stdout.includes(expected), `the output shows ${expected}:\n${run.stdout}`);
    }
    assert.match(run.stdout, /^heard \d+\.\d s of the agent's voice$/m);
    const recording = await readFile(path.join(cwd, "call.wav"));
    assert.equal(recording.subarray(0, 4).toString(), "RIFF");
  },
  "docs/legacy.md": async (run) => {
    assert.match(run.stdout, /^\{"message":"We are open Monday to Friday, 9 am to 5 pm\."\}$/m);
    assert.match(run.stdout, /"role":"AI","message":"We are open Monday to Friday, 9 am to 5 pm\."/);
  },
  "docs/simulation.md": async (run) => {
    assert.match(run.stdout, /"stop_reason":"\w+","evaluation":\{"verdict":"(pass|fail)"/);
  },
  "docs/voice.md": async (run, cwd) => {
    assert.match(run.stdout, /^<script src="http:\/\/localhost:\d+\/widget\.js"$/m, "the site's page loads the widget from Parley");
    const visits = [...run.stdout.matchAll(/^\{"thread_id":"([\w-]+)","token":true\}$/gm)].map((match) => match[1]);
    assert.equal(visits.length, 2, run.stdout);
    assert.equal(visits[0], visits[1], "the visitor keeps their thread");
    for (const expected of [
      '"status": "ended"',
      '"disconnection_reason": "user_hangup"',
      "HTTP/1.1 206 Partial Content",
      "content-range: bytes 0-43/",
      '{"status":"scheduled"}',
      '{"response":"Call ended"}',
      '"direction":"inbound","status":"ongoing","from_number":"+14155552671","to_number":"+14155550100"',
      '"alias":"+14155552671"',
      '"direction": "inbound"',
      '"transcript": "Agent: Hello, you have reached Parley\'s demo line. How can I help?\\nUser: ',
    ]) {
      assert.ok(run.stdout.includes(expected), `the output shows ${expected}:\n${run.stdout}`);
    }
    const recording = await readFile(path.join(cwd, "call.wav"));
    assert.equal(recording.subarray(0, 4).toString(), "RIFF");
  },
  "docs/tools.md": async (run) => {
    assert.match(run.stdout, /^\{"tool":"book_appointment","booked":true,"day":"Tuesday"\}$/m);
    assert.match(run.stdout, /^another secret: 401$/m);
  },
  "packages/client/README.md": async (run) => {
    assert.match(run.stdout, /^reply: We are open Monday to Friday, 9 am to 5 pm\. id: \S+$/m);
    assert.match(run.stdout, /^streamed equals reply: true$/m);
    assert.match(run.stdout, /^user: What are your opening hours\?$/m);
    assert.match(run.stdout, /^event 2 message\.created$/m);
    assert.match(run.stdout, /^invalid: \[ 'query', 'limit' \] Input should be less than or equal to 100$/m);
  },
};

test("every block in the docs that a reader would run either runs or says why not", () => {
  assert.ok(docs.some((doc) => doc.relativePath === "README.md") && docs.some((doc) => doc.relativePath.startsWith("docs/")), "the documents are found");
  assert.deepEqual(docs.flatMap((doc) => doc.problems), []);
  for (const relativePath of Object.keys(expectations)) {
    const doc = docs.find((candidate) => candidate.relativePath === relativePath);
    assert.ok(doc?.blocks.some((block) => block.plan.kind === "run"), `${relativePath} has blocks that run, which its expectations check`);
  }
});

test("the markers: a block without a reason, a page that is not saved and a stray expectation are each reported", () => {
  const doc = parseDocBlocks(
    "example.md",
    [
      "```sh", "echo runs", "```",
      "<!-- not run: needs a Twilio account -->", "", "```sh", "call twilio", "```",
      "<!-- not run -->", "```ts", "nothing", "```",
      "<!-- save as: page.html -->", "```html", "<p>saved</p>", "```",
      "```html", "<p>neither</p>", "```",
      "1. a step", "   <!-- expect: HTTP 404 -->", "   ```bash", "   curl gone", "   ```",
      "<!-- expect: HTTP 422 -->", "```json", "{}", "```",
    ].join("\n"),
  );
  assert.deepEqual(
    doc.blocks.map((block) => [block.line, block.plan]),
    [
      [1, { kind: "run", runner: "bash", expectedStatuses: [] }],
      [6, { kind: "skip", reason: "needs a Twilio account" }],
      [10, { kind: "skip", reason: "" }],
      [14, { kind: "save", fileName: "page.html" }],
      [17, { kind: "illustration" }],
      [22, { kind: "run", runner: "bash", expectedStatuses: [404] }],
      [26, { kind: "illustration" }],
    ],
  );
  assert.equal(doc.blocks[5]?.code, "curl gone\n");
  assert.deepEqual(
    doc.problems.map((problem) => problem.split(":").slice(0, 2).join(":")),
    ["example.md:10", "example.md:17", "example.md:26"],
  );
});

/** One document's blocks, in a folder of their own inside the repository (so that its packages resolve), with a fresh organization. */
async function runDocumentOn(h: () => Harness, port: string, doc: DocFile): Promise<void> {
  const { apiKey, projectId } = await h().organization(demoProjectConfig, "demo");
  await mkdir(path.join(root, ".tmp"), { recursive: true });
  const cwd = await mkdtemp(path.join(root, ".tmp", `doc-${doc.relativePath.replace(/[^A-Za-z0-9]+/g, "-")}-`));
  try {
    const env = {
      PATH: `${path.dirname(process.execPath)}:${process.env.PATH ?? ""}`,
      PORT: port,
      KEY: apiKey,
      PROJECT: projectId,
      SITE_PORT: String(await freePort()),
    };
    const run = await runDocument(doc, cwd, env, 220_000);
    assert.equal(run.code, 0, `the blocks failed:\n${run.stderr}\n${run.stdout}`);
    assert.deepEqual(run.unexpectedStatuses, [], `requests answered with an error:\n${run.stdout}`);
    await expectations[doc.relativePath]?.(run, cwd);
  } finally {
    await rm(cwd, { recursive: true, force: true });
  }
}

// On the embedded database, where a newcomer runs them. The documents run side by side: most of the time is spent
// in phone calls that the callee speaks and the recognizer hears in real time (about a minute each).
forEachDatabase(
  "the documents' examples",
  (h) => {
    test("every document's blocks run as written against the server", { concurrency: true, timeout: 300_000 }, async (t) => {
      const port = new URL(await h().server.listen({ port: 0, host: "localhost" })).port;
      const runnable = docs.filter((doc) => doc.blocks.some((block) => block.plan.kind === "run"));
      await Promise.all(
        runnable.map((doc) => {
          const lines = doc.blocks.filter((block) => block.plan.kind === "run").map((block) => block.line);
          return t.test(`${doc.relativePath}: blocks at lines ${lines.join(", ")}`, { timeout: 240_000 }, () => runDocumentOn(h, port, doc));
        }),
      );
    });
  },
  { env: { SPEECH_MODE: "audio" }, only: "pglite" },
);
