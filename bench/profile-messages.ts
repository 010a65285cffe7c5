/**
 * `tsx bench/profile-messages.ts [seconds] [out.cpuprofile]`: the messages benchmark's load (a page of 20, 64
 * keep-alive connections) against a Parley server on PostgreSQL, with V8's CPU profile of the server over the loaded
 * window only, warm-up excluded; prints the heaviest functions by self time and per-request CPU. Open the written
 * profile in Chrome's DevTools for the tree.
 */
import { writeFile } from "node:fs/promises";
import type { Profiler } from "node:inspector";
import { chatQuestion, helpDeskConfig, BenchContext } from "./lib/context.js";
import { api, rawRequest } from "./lib/http.js";
import { loadWithCpu } from "./lib/measure.js";

const seconds = Number(process.argv[2] ?? 8);
const out = process.argv[3] ?? "messages.cpuprofile";
const context = new BenchContext({ quick: false, dbs: ["postgres"], minutes: 1 });
try {
  const parley = await context.parley("postgres");
  const tenant = await context.tenant(parley, helpDeskConfig);
  const [threadId] = await context.threads(parley, tenant, 1);
  for (let turn = 0; turn < 10; turn++) {
    await api(parley.base, "POST", "/chat", tenant.apiKey, { thread_id: threadId, message: `${chatQuestion} (${turn})`, service_config_name: tenant.projectName });
  }
  const requests = [rawRequest("GET", `/threads/${threadId}/messages`, { authorization: tenant.apiKey })];
  await context.load({ port: parley.port, requests, connections: 64, warmupMs: 3000, durationMs: 1000 });
  await parley.call("cpuProfileStart", { samplingIntervalUs: 100 });
  const result = await loadWithCpu(context, parley, { requests, connections: 64, warmupMs: 0, durationMs: seconds * 1000 });
  const profile = await parley.call<Profiler.Profile>("cpuProfileStop");
  await writeFile(out, JSON.stringify(profile));
  const self = new Map<string, number>();
  const total = profile.samples?.length ?? 1;
  const counts = new Map<number, number>();
  for (const id of profile.samples ?? []) counts.set(id, (counts.get(id) ?? 0) + 1);
  for (const node of profile.nodes) {
    const frame = node.callFrame;
    const name = `${frame.functionName || "(anonymous)"} ${frame.url.split("/").slice(-2).join("/")}:${frame.lineNumber + 1}`;
    self.set(name, (self.get(name) ?? 0) + (counts.get(node.id) ?? 0));
  }
  // The share of the busy samples (idle ones left out) of the process's measured CPU per request.
  const busy = total - (self.get("(idle) :0") ?? 0);
  process.stdout.write(`${result.perSecond.toFixed(0)} req/s, CPU per request ${result.cpu.serverUs.toFixed(1)} µs (PostgreSQL ${result.cpu.postgresUs.toFixed(1)}), ${result.errors} errors\n`);
  for (const [name, count] of [...self].filter(([name]) => name !== "(idle) :0").sort((a, b) => b[1] - a[1]).slice(0, 60)) {
    process.stdout.write(`${((100 * count) / busy).toFixed(1).padStart(5)}%  ${((count / busy) * result.cpu.serverUs).toFixed(2).padStart(6)} µs/req  ${name}\n`);
  }
} finally {
  await context.close();
}
