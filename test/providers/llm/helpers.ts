import assert from "node:assert/strict";
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http";
import { createServer as createTlsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { ProviderError } from "../../../src/providers/llm/types.js";

export async function collect(stream: AsyncIterable<string>): Promise<string[]> {
  const deltas: string[] = [];
  for await (const delta of stream) deltas.push(delta);
  return deltas;
}

/** Drains a stream that must fail; records the deltas it yielded first and runs `onFirstDelta` after the first one. */
export async function failureOf(stream: AsyncIterable<string>, deltas: string[] = [], onFirstDelta?: () => void): Promise<ProviderError> {
  try {
    for await (const delta of stream) {
      deltas.push(delta);
      if (deltas.length === 1) onFirstDelta?.();
    }
  } catch (error) {
    assert.ok(error instanceof ProviderError, `expected a ProviderError, got ${String(error)}`);
    return error;
  }
  return assert.fail(`expected the stream to fail, it yielded ${JSON.stringify(deltas)}`);
}

export interface RecordedCall {
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

export interface RawServer {
  /** `http://127.0.0.1:<port>` (`https://` with `tls`), without a trailing slash. */
  url: string;
  calls: RecordedCall[];
  /** Replaces the body later calls get. */
  setBody(body: string | Uint8Array[]): void;
  /** How many TCP connections clients opened so far, to tell a reused keep-alive connection from a new one. */
  connectionsOpened(): number;
  /** How many of them are still open. */
  connectionsOpen(): number;
  close(): Promise<void>;
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * A loopback server answering every POST with the same raw body, for wire formats the fake vendor servers do not
 * produce. A body given as parts goes out one socket write per part, a few milliseconds apart, so that a test
 * controls where the client's reads are split.
 */
export async function startRawServer(
  body: string | Uint8Array[],
  options: { status?: number; tls?: { key: string; cert: string } } = {},
): Promise<RawServer> {
  const status = options.status ?? 200;
  const calls: RecordedCall[] = [];
  let parts = typeof body === "string" ? [Buffer.from(body)] : body;
  let opened = 0;
  let open = 0;
  const answer = (req: IncomingMessage, res: ServerResponse): void => {
    const received: Buffer[] = [];
    req.on("data", (part: Buffer) => received.push(part));
    req.on("end", () => {
      calls.push({ path: req.url ?? "", headers: req.headers, body: JSON.parse(Buffer.concat(received).toString("utf8")) });
      const answering = parts;
      void (async () => {
        res.writeHead(status, { "content-type": status === 200 ? "text/event-stream" : "text/html" });
        for (const [index, part] of answering.entries()) {
          if (index > 0) await pause(2);
          if (res.destroyed) return;
          res.write(part);
        }
        res.end();
      })();
    });
  };
  const server = options.tls ? createTlsServer(options.tls, answer) : createServer(answer);
  server.on(options.tls ? "secureConnection" : "connection", (socket: NodeJS.EventEmitter) => {
    opened++;
    open++;
    socket.once("close", () => open--);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `${options.tls ? "https" : "http"}://127.0.0.1:${port}`,
    calls,
    setBody(next) {
      parts = typeof next === "string" ? [Buffer.from(next)] : next;
    },
    connectionsOpened: () => opened,
    connectionsOpen: () => open,
    close() {
      server.closeAllConnections();
      return new Promise((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    },
  };
}
