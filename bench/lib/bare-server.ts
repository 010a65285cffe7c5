/**
 * The physical limit for an HTTP read on this machine: a bare `node:http` server in its own process that answers
 * every request with the same JSON bytes (set by the runner with "body") and the same headers as Parley's answer,
 * a new request id each time included.
 */
import { randomUUID } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { serveParent } from "./children.js";

let body = Buffer.from("{}");
const server = createServer((_request, response) => {
  response.writeHead(200, {
    "x-request-id": randomUUID(),
    "access-control-allow-origin": "*",
    "content-type": "application/json; charset=utf-8",
    "content-length": body.length,
  });
  response.end(body);
});
server.keepAliveTimeout = 60_000;
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));

serveParent(
  { port: (server.address() as AddressInfo).port },
  {
    body: (payload) => {
      body = Buffer.from(String(payload));
    },
  },
  async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  },
);
