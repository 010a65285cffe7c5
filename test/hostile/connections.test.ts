import assert from "node:assert/strict";
import type { Server } from "node:http";
import net, { type AddressInfo } from "node:net";
import { after, before, test } from "node:test";
import pino from "pino";
import { createApp, type App } from "../../src/app.js";
import { forEachDatabase, testConfig } from "../support/harness.js";
import { errorLevel, LogLines } from "../support/log-lines.js";
import { buildWorld, snapshot, type World } from "./support.js";

/** What a raw client received before the server closed the connection, and how long that took. */
interface Outcome {
  received: string;
  elapsedMs: number;
}

/** Opens a raw TCP connection, writes `head`, then `drip` every 100 ms, until the server closes it (or `giveUpMs`). */
function rawExchange(port: number, head: string, drip: string | undefined, giveUpMs = 8000): Promise<Outcome> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = net.connect(port, "127.0.0.1");
    let received = "";
    const dripper = drip === undefined ? undefined : setInterval(() => socket.writable && socket.write(drip), 100);
    const giveUp = setTimeout(() => {
      socket.destroy();
      reject(new Error(`the server kept the connection open for ${giveUpMs} ms; received ${JSON.stringify(received)}`));
    }, giveUpMs);
    socket.on("data", (chunk: Buffer) => (received += chunk.toString("latin1")));
    socket.on("error", () => undefined);
    socket.on("close", () => {
      clearInterval(dripper);
      clearTimeout(giveUp);
      resolve({ received, elapsedMs: Date.now() - started });
    });
    if (head !== "") socket.write(head);
  });
}

function statusAndBody(received: string): { status: number; body: string } {
  const [head = "", body = ""] = received.split("\r\n\r\n");
  return { status: Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1]), body };
}

forEachDatabase("slow and malformed clients on a real socket", (h) => {
  let world: World;
  let port: number;
  let raw: Server;
  let settings: { requestTimeout: number; headersTimeout: number; keepAliveTimeout: number };
  before(async () => {
    world = await buildWorld(h());
    await h().server.listen({ port: 0, host: "127.0.0.1" });
    raw = h().server.server;
    port = (raw.address() as AddressInfo).port;
    settings = { requestTimeout: raw.requestTimeout, headersTimeout: raw.headersTimeout, keepAliveTimeout: raw.keepAliveTimeout };
  });
  after(() => {
    Object.assign(raw, settings);
  });

  /** Lowers the server's timeouts to `ms` for the duration of `work`: the production values would take minutes. */
  async function withTimeouts(ms: number, work: () => Promise<void>): Promise<void> {
    Object.assign(raw, { requestTimeout: ms, headersTimeout: ms, keepAliveTimeout: ms });
    try {
      await work();
    } finally {
      Object.assign(raw, settings);
    }
  }

  test("the server bounds every connection: 120 s for a request, 60 s for its headers, 72 s idle between requests", () => {
    assert.deepEqual(settings, { requestTimeout: 120_000, headersTimeout: 60_000, keepAliveTimeout: 72_000 });
  });

  test("a client that sends its headers and then trickles the body is cut off with 408 once the request timeout passes", async () => {
    const before = await snapshot(h(), world.organizationId);
    await withTimeouts(1000, async () => {
      const head = `POST /threads HTTP/1.1\r\nHost: parley\r\nAuthorization: ${world.apiKey}\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"alias":"`;
      const outcome = await rawExchange(port, head, "a");
      assert.ok(outcome.elapsedMs >= 900 && outcome.elapsedMs < 4000, `cut after ${outcome.elapsedMs} ms`);
      assert.deepEqual(statusAndBody(outcome.received), { status: 408, body: '{"detail":"Request Timeout"}' });
    });
    assert.deepEqual(await snapshot(h(), world.organizationId), before);
  });

  test("a client that trickles its headers, or connects and says nothing, is cut off once the headers timeout passes", async () => {
    await withTimeouts(1000, async () => {
      const trickled = await rawExchange(port, "GET /healthz HTTP/1.1\r\nHost: parley\r\n", "X-Slow: yes\r\n");
      assert.ok(trickled.elapsedMs < 4000, `cut after ${trickled.elapsedMs} ms`);
      assert.equal(statusAndBody(trickled.received).status, 408);
      const silent = await rawExchange(port, "", undefined);
      assert.ok(silent.elapsedMs < 4000, `cut after ${silent.elapsedMs} ms`);
    });
  });

  test("an idle keep-alive connection is closed once the keep-alive timeout passes", async () => {
    await withTimeouts(300, async () => {
      const outcome = await rawExchange(port, "GET /healthz HTTP/1.1\r\nHost: parley\r\n\r\n", undefined);
      assert.equal(statusAndBody(outcome.received).status, 200);
      assert.ok(outcome.elapsedMs < 3000, `closed after ${outcome.elapsedMs} ms`);
    });
  });

  test("a declared body over the limit is refused with 413 before it is sent", async () => {
    const head = `POST /chat HTTP/1.1\r\nHost: parley\r\nAuthorization: ${world.apiKey}\r\nContent-Type: application/json\r\nContent-Length: 50000000\r\n\r\n`;
    const outcome = await rawExchange(port, head, undefined);
    const { status, body } = statusAndBody(outcome.received);
    assert.equal(status, 413);
    assert.ok(body.endsWith('{"detail":"Request Entity Too Large"}'), JSON.stringify(outcome.received));
  });

  test("a request head over 16 KiB (a query repeated thousands of times) is 431 with a detail", async () => {
    const outcome = await rawExchange(port, `GET /calls?${"status=ended&".repeat(2000)} HTTP/1.1\r\nHost: parley\r\nAuthorization: ${world.apiKey}\r\n\r\n`, undefined);
    assert.deepEqual(statusAndBody(outcome.received), { status: 431, body: '{"detail":"Request Header Fields Too Large"}' });
  });

  test("a request Node cannot parse (control characters in a header, a broken request line) is 400 with a detail", async () => {
    for (const head of ["GET /healthz HTTP/1.1\r\nHost: parley\r\nAuthorization: sk_\u0001bad\r\n\r\n", "NOT A REQUEST\r\n\r\n", "GET /healthz HTTP/9.9\r\n\r\n"]) {
      const outcome = await rawExchange(port, head, undefined);
      assert.deepEqual(statusAndBody(outcome.received), { status: 400, body: '{"detail":"Bad Request"}' }, JSON.stringify(head));
    }
  });

  test("an upgrade request answered over HTTP (not a socket route, refused, or a malformed URL) has its connection closed", async () => {
    const upgrade = "Connection: Upgrade\r\nUpgrade: websocket\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==";
    const cases: [string, number][] = [
      ["/healthz", 200],
      ["/nowhere", 404],
      [`/threads/${world.threadId}/events?after=-1`, 422],
      ["/threads/x/events", 401],
      ["/threads/%zz/events", 400],
    ];
    for (const [path, status] of cases) {
      const outcome = await rawExchange(port, `GET ${path} HTTP/1.1\r\nHost: parley\r\nAuthorization: sk_junk\r\n${upgrade}\r\n\r\n`, undefined, 3000);
      assert.equal(statusAndBody(outcome.received).status, status, path);
    }
  });
});

forEachDatabase("paths that climb out of the documentation's static files", (h) => {
  let app: App;
  let port: number;
  let logged: LogLines;
  before(async () => {
    logged = new LogLines();
    app = await createApp(testConfig(h().database), { db: h().database.db, logger: pino({ level: "warn" }, logged) });
    await app.server.listen({ port: 0, host: "127.0.0.1" });
    port = (app.server.server.address() as AddressInfo).port;
  });
  after(() => app.close());

  test("a /docs/static path with .., an encoded slash or backslash, or NUL, sent as is, is refused with 4xx and nothing logged at error level", async () => {
    const before = logged.lines.length;
    for (const path of ["/docs/static/..%2fpackage.json", "/docs/static/..", "/docs/static/%00", "/docs/static/..%5cpackage.json", "/docs/static/..%2f..%2fpackage.json"]) {
      const outcome = await rawExchange(port, `GET ${path} HTTP/1.1\r\nHost: parley\r\nConnection: close\r\n\r\n`, undefined, 3000);
      const { status, body } = statusAndBody(outcome.received);
      assert.ok([400, 403, 404].includes(status), `${path}: ${status} ${body}`);
      assert.doesNotMatch(body, /"name"\s*:\s*"parley"/, `${path} does not serve package.json`);
    }
    assert.deepEqual(logged.since(before, errorLevel), []);
  });
});

forEachDatabase(
  "client timeouts from the settings",
  (h) => {
    let raw: Server;
    let port: number;
    before(async () => {
      await h().server.listen({ port: 0, host: "127.0.0.1" });
      raw = h().server.server;
      port = (raw.address() as AddressInfo).port;
    });

    test("HTTP_*_TIMEOUT_MS set the server's bounds, and a client trickling its headers is cut off by them", async () => {
      assert.deepEqual([raw.headersTimeout, raw.requestTimeout, raw.keepAliveTimeout], [700, 900, 800]);
      const trickled = await rawExchange(port, "GET /healthz HTTP/1.1\r\nHost: parley\r\n", "X-Slow: yes\r\n", 5000);
      assert.deepEqual(statusAndBody(trickled.received), { status: 408, body: '{"detail":"Request Timeout"}' });
    });
  },
  { env: { HTTP_HEADERS_TIMEOUT_MS: "700", HTTP_REQUEST_TIMEOUT_MS: "900", HTTP_KEEP_ALIVE_TIMEOUT_MS: "800" } },
);
