import { Agent, request } from "node:http";

/** A raw HTTP/1.1 request for the load generator. */
export function rawRequest(method: string, path: string, headers: Record<string, string>, body?: unknown): string {
  const payload = body === undefined ? "" : JSON.stringify(body);
  const lines = [`${method} ${path} HTTP/1.1`, "host: 127.0.0.1", "connection: keep-alive"];
  for (const [name, value] of Object.entries(headers)) lines.push(`${name}: ${value}`);
  if (body !== undefined) lines.push("content-type: application/json", `content-length: ${Buffer.byteLength(payload)}`);
  return `${lines.join("\r\n")}\r\n\r\n${payload}`;
}

/** A JSON call for setting things up; throws unless the status is 2xx. */
export async function api<T>(base: string, method: string, path: string, authorization: string, body?: unknown): Promise<T> {
  const response = await fetch(base + path, {
    method,
    headers: { authorization, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return (text === "" ? {} : JSON.parse(text)) as T;
}

/** One keep-alive connection, so that sequential latency samples never include a TCP handshake. */
export const sequentialAgent = new Agent({ keepAlive: true, maxSockets: 1 });

/**
 * POSTs `body` and resolves with the milliseconds until the response text first matches `firstToken` and until the
 * response ended; rejects on a non-2xx status or when the body never matched.
 */
export function timedPost(port: number, path: string, headers: Record<string, string>, body: unknown, firstToken: RegExp): Promise<{ ttft: number; total: number; text: string }> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const started = performance.now();
    let ttft = -1;
    let text = "";
    const outgoing = request(
      { host: "127.0.0.1", port, path, method: "POST", agent: sequentialAgent, headers: { ...headers, "content-type": "application/json", "content-length": Buffer.byteLength(payload) } },
      (response) => {
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          text += chunk;
          if (ttft < 0 && firstToken.test(text)) ttft = performance.now() - started;
        });
        response.on("end", () => {
          const status = response.statusCode ?? 0;
          if (status < 200 || status >= 300) reject(new Error(`${path}: HTTP ${status} ${text.slice(0, 200)}`));
          else if (ttft < 0) reject(new Error(`${path}: no first token in ${text.slice(0, 200)}`));
          else resolve({ ttft, total: performance.now() - started, text });
        });
        response.on("error", reject);
      },
    );
    outgoing.on("error", reject);
    outgoing.end(payload);
  });
}

/** GETs `path` on the sequential connection; resolves with the milliseconds to the whole body. */
export function timedGet(port: number, path: string, headers: Record<string, string>): Promise<{ ms: number; text: string }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const outgoing = request({ host: "127.0.0.1", port, path, method: "GET", agent: sequentialAgent, headers }, (response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => (text += chunk));
      response.on("end", () => {
        const status = response.statusCode ?? 0;
        if (status < 200 || status >= 300) reject(new Error(`${path}: HTTP ${status} ${text.slice(0, 200)}`));
        else resolve({ ms: performance.now() - started, text });
      });
      response.on("error", reject);
    });
    outgoing.on("error", reject);
    outgoing.end();
  });
}
