/**
 * Many streaming chats at once, from a process of its own: each on its own connection and thread, started over
 * `rampMs`; reports how many completed, time to first token and to the end, and how many were in flight at most.
 */
import { Agent, request } from "node:http";
import { serveParent } from "./children.js";
import { summarize, type LatencySummary } from "./stats.js";

export interface StreamSpec {
  port: number;
  authorization: string;
  /** One JSON body per stream. */
  bodies: unknown[];
  rampMs: number;
  timeoutMs: number;
}

export interface StreamResult {
  started: number;
  completed: number;
  failed: number;
  firstError?: string;
  peakInFlight: number;
  /** Milliseconds from the first stream's start to the last stream's first token: how long admitting them all took. */
  admittedAfterMs: number;
  ttft: LatencySummary;
  duration: LatencySummary;
}

async function run(spec: StreamSpec): Promise<StreamResult> {
  const agent = new Agent({ keepAlive: false, maxSockets: Infinity });
  const ttft: number[] = [];
  const durations: number[] = [];
  let inFlight = 0;
  let lastFirstToken = 0;
  let peakInFlight = 0;
  let completed = 0;
  let failed = 0;
  let firstError: string | undefined;
  const fail = (message: string) => {
    failed += 1;
    firstError ??= message;
  };
  const one = (body: unknown) =>
    new Promise<void>((resolve) => {
      const payload = JSON.stringify(body);
      const started = performance.now();
      let text = "";
      let streaming = false;
      const done = (error?: string) => {
        if (streaming) inFlight -= 1;
        streaming = false;
        if (error) fail(error);
        resolve();
      };
      const outgoing = request(
        {
          host: "127.0.0.1",
          port: spec.port,
          path: "/chat",
          method: "POST",
          agent,
          timeout: spec.timeoutMs,
          headers: { authorization: spec.authorization, "content-type": "application/json", "content-length": Buffer.byteLength(payload) },
        },
        (response) => {
          response.setEncoding("utf8");
          response.on("data", (chunk: string) => {
            text += chunk;
            if (!streaming && text.includes('"token"')) {
              streaming = true;
              ttft.push(performance.now() - started);
              lastFirstToken = performance.now();
              inFlight += 1;
              peakInFlight = Math.max(peakInFlight, inFlight);
            }
          });
          response.on("end", () => {
            const lastLine = text.trimEnd().split("\n").pop() ?? "";
            if (response.statusCode === 200 && lastLine.includes('"reply_message_id"')) {
              completed += 1;
              durations.push(performance.now() - started);
              done();
            } else done(`HTTP ${response.statusCode}: ${lastLine.slice(0, 200)}`);
          });
          response.on("error", (error) => done(error.message));
        },
      );
      outgoing.on("timeout", () => outgoing.destroy(new Error(`no end within ${spec.timeoutMs} ms`)));
      outgoing.on("error", (error) => done(error.message));
      outgoing.end(payload);
    });
  const streams: Promise<void>[] = [];
  const gap = spec.bodies.length > 1 ? spec.rampMs / (spec.bodies.length - 1) : 0;
  const began = performance.now();
  for (const [index, body] of spec.bodies.entries()) {
    const wait = began + index * gap - performance.now();
    if (wait > 1) await new Promise((resolve) => setTimeout(resolve, wait));
    streams.push(one(body));
  }
  await Promise.all(streams);
  agent.destroy();
  return {
    started: spec.bodies.length,
    completed,
    failed,
    ...(firstError ? { firstError } : {}),
    peakInFlight,
    admittedAfterMs: lastFirstToken - began,
    ttft: summarize(ttft),
    duration: summarize(durations),
  };
}

serveParent({ pid: process.pid }, { run: (payload) => run(payload as StreamSpec) });
