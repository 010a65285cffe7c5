/**
 * A tool receiver as a project's developer would write one: real HTTP on 127.0.0.1, checking `x-parley-signature`
 * with retell-sdk's own `verify` on the raw body before it answers. Paths choose the answer:
 *
 *   /json  → 200 application/json {"status": "shipped", "tool": <the tool's name>}
 *   /text  → 200 text/plain "Booked for Tuesday."
 *   /fail  → 500
 *   /slow  → never answers
 *   /big   → 200 text/plain, BIG_ANSWER (20 KiB)
 *
 * A request whose signature does not verify gets 401 and is recorded with `verified: false`.
 */
import { createServer, type IncomingHttpHeaders } from "node:http";
import type { AddressInfo } from "node:net";
import { verify } from "retell-sdk";

export interface ReceivedToolRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  json: Record<string, unknown>;
  verified: boolean;
}

export interface ToolReceiver {
  url: string;
  requests: ReceivedToolRequest[];
  close(): Promise<void>;
}

/** 20 KiB and a byte: one ASCII letter, then two-byte characters, so that the 16 KiB cut falls inside a character. */
export const BIG_ANSWER = `x${"é".repeat(10 * 1024)}`;

export async function startToolReceiver(secret: string): Promise<ToolReceiver> {
  const requests: ReceivedToolRequest[] = [];
  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on("data", (part: Buffer) => parts.push(part));
    req.on("end", () => {
      void (async () => {
        const body = Buffer.concat(parts).toString("utf8");
        const verified = await verify(body, secret, String(req.headers["x-parley-signature"] ?? ""));
        const json = JSON.parse(body) as Record<string, unknown>;
        const path = req.url ?? "";
        requests.push({ path, headers: req.headers, body, json, verified });
        if (!verified) return res.writeHead(401).end("bad signature");
        if (path === "/json") return res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ status: "shipped", tool: json["tool"] }));
        if (path === "/text") return res.writeHead(200, { "content-type": "text/plain" }).end("Booked for Tuesday.");
        if (path === "/fail") return res.writeHead(500, { "content-type": "text/plain" }).end("the booking system is down");
        if (path === "/big") return res.writeHead(200, { "content-type": "text/plain" }).end(BIG_ANSWER);
        if (path === "/slow") return;
        res.writeHead(404).end();
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close() {
      server.closeAllConnections();
      return new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}
