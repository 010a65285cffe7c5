/**
 * `tsx bench/profile-chat.ts [seconds] [out.cpuprofile] [intervalUs]`: the chat benchmark's load (the built-in agent,
 * 32 connections each on its own thread) against a Parley server on PostgreSQL, with V8's CPU profile of the server
 * over the loaded window only, warm-up excluded; prints the heaviest functions by self and inclusive time, as shares
 * of the busy samples and as µs of the measured CPU per chat. Open the written profile in Chrome's DevTools for the tree.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import type { Profiler } from "node:inspector";
import { chatQuestion, helpDeskConfig, BenchContext } from "./lib/context.js";
import { rawRequest } from "./lib/http.js";
import { loadWithCpu } from "./lib/measure.js";

const seconds = Number(process.argv[2] ?? 8);
const out = process.argv[3] ?? "chat.cpuprofile";
const intervalUs = Number(process.argv[4] ?? 200);
const connections = 32;
/** With PERF_OUT=file, `perf record` (on-CPU samples, the kernel's included) over the loaded window instead of V8's profiler. */
const perfOut = process.env.PERF_OUT;

/** User and system seconds of a process so far. */
function userSystem(pid: number): { user: number; system: number } {
  const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return { user: Number(fields[11]) / 100, system: Number(fields[12]) / 100 };
}
const context = new BenchContext({ quick: false, dbs: ["postgres"], minutes: 1 });
try {
  const parley = await context.parley("postgres", {}, perfOut ? ["--perf-basic-prof-only-functions"] : ["--enable-source-maps"]);
  const tenant = await context.tenant(parley, helpDeskConfig);
  const threads = await context.threads(parley, tenant, connections);
  const requests = threads.map((threadId) =>
    rawRequest("POST", "/chat", { authorization: tenant.apiKey }, { thread_id: threadId, message: chatQuestion, service_config_name: tenant.projectName }),
  );
  const before = userSystem(parley.pid);
  const plain = await loadWithCpu(context, parley, { requests, connections, warmupMs: 3000, durationMs: 4000 });
  const after = userSystem(parley.pid);
  const chats = Math.max(1, plain.total);
  process.stdout.write(`user ${((after.user - before.user) * 1e6 / chats).toFixed(1)} µs, system ${((after.system - before.system) * 1e6 / chats).toFixed(1)} µs per chat\n`);
  if (perfOut) {
    const perf = spawn("perf", ["record", "-e", "cpu-clock", "-F", "2000", "-g", "-p", String(parley.pid), "-o", perfOut, "--", "sleep", String(seconds)], { stdio: "inherit" });
    const result = await loadWithCpu(context, parley, { requests, connections, warmupMs: 0, durationMs: seconds * 1000 });
    await new Promise((resolve) => perf.once("exit", resolve));
    process.stdout.write(`perf window: ${result.perSecond.toFixed(0)} chats/s, CPU per chat ${result.cpu.serverUs.toFixed(1)} µs, ${result.total} chats\n`);
  } else {
  await parley.call("cpuProfileStart", { samplingIntervalUs: intervalUs });
  const result = await loadWithCpu(context, parley, { requests, connections, warmupMs: 0, durationMs: seconds * 1000 });
  const profile = await parley.call<Profiler.Profile>("cpuProfileStop");
  await writeFile(out, JSON.stringify(profile));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const nameOf = (node: Profiler.ProfileNode) => {
    const frame = node.callFrame;
    return `${frame.functionName || "(anonymous)"} ${frame.url.split("/").slice(-2).join("/")}:${frame.lineNumber + 1}:${frame.columnNumber + 1}`;
  };
  const counts = new Map<number, number>();
  for (const id of profile.samples ?? []) counts.set(id, (counts.get(id) ?? 0) + 1);
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let busy = 0;
  for (const [id, count] of counts) {
    const node = byId.get(id)!;
    if (node.callFrame.functionName === "(idle)") continue;
    busy += count;
    const name = nameOf(node);
    self.set(name, (self.get(name) ?? 0) + count);
    const seen = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const outer = nameOf(byId.get(at)!);
      if (seen.has(outer)) continue;
      seen.add(outer);
      inclusive.set(outer, (inclusive.get(outer) ?? 0) + count);
    }
  }
  process.stdout.write(
    `unprofiled: ${plain.perSecond.toFixed(0)} chats/s, CPU per chat ${plain.cpu.serverUs.toFixed(1)} µs (PostgreSQL ${plain.cpu.postgresUs.toFixed(1)})\n` +
      `profiled: ${result.perSecond.toFixed(0)} chats/s, CPU per chat ${result.cpu.serverUs.toFixed(1)} µs (PostgreSQL ${result.cpu.postgresUs.toFixed(1)}), ${result.errors} errors; µs below are shares of the unprofiled CPU\n`,
  );
  const print = (title: string, table: Map<string, number>, top: number) => {
    process.stdout.write(`\n${title}\n`);
    for (const [name, count] of [...table].sort((a, b) => b[1] - a[1]).slice(0, top)) {
      process.stdout.write(`${((100 * count) / busy).toFixed(1).padStart(5)}%  ${((count / busy) * plain.cpu.serverUs).toFixed(2).padStart(6)} µs/chat  ${name}\n`);
    }
  };
  print("self", self, 70);
  print("inclusive", inclusive, 120);
  }
} finally {
  await context.close();
}
