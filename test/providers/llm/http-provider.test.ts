/** The shared HTTP client under the vendor adapters: connections, TLS and cleanup, seen from a loopback server. */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { OpenAiProvider, type OpenAiSettings } from "../../../src/providers/llm/openai.js";
import type { LlmRequest } from "../../../src/providers/llm/types.js";
import { collect, failureOf, startRawServer, type RawServer } from "./helpers.js";
import { eventually } from "../../support/polling.js";

const settings: Omit<OpenAiSettings, "baseUrl"> = { model: "m", temperature: 0, maxTokens: 16, apiKey: undefined };
const request: LlmRequest = { task: "reply", messages: [{ role: "user", content: "Hi" }] };
const chunk = (content: string): string => `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
const reply = `${chunk("Hel")}${chunk("lo")}data: [DONE]\n\n`;
const openSslMissing = spawnSync("openssl", ["version"]).status !== 0;

function openAi(server: RawServer, timeoutMs = 2_000): OpenAiProvider {
  return new OpenAiProvider({ ...settings, baseUrl: `${server.url}/v1` }, { timeoutMs, retryDelayMs: 1 });
}

describe("the shared HTTP client", () => {
  const servers: RawServer[] = [];
  let certificates: { dir: string; key: string; cert: string; certPath: string } | undefined;
  before(() => {
    if (openSslMissing) return;
    const dir = mkdtempSync(path.join(tmpdir(), "parley-tls-"));
    const [keyPath, certPath] = [path.join(dir, "key.pem"), path.join(dir, "cert.pem")];
    const generated = spawnSync("openssl", [
      ...["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "1"],
      ...["-keyout", keyPath, "-out", certPath, "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
    ]);
    assert.equal(generated.status, 0, generated.stderr.toString());
    certificates = { dir, key: readFileSync(keyPath, "utf8"), cert: readFileSync(certPath, "utf8"), certPath };
  });
  after(async () => {
    await Promise.all(servers.map((server) => server.close()));
    if (certificates) rmSync(certificates.dir, { recursive: true, force: true });
  });

  async function serve(body: string | Uint8Array[], options: Parameters<typeof startRawServer>[1] = {}): Promise<RawServer> {
    const server = await startRawServer(body, options);
    servers.push(server);
    return server;
  }

  it("posts JSON asking for an event stream, with its length", async () => {
    const server = await serve(reply);
    await collect(openAi(server).stream(request));
    const headers = server.calls[0]?.headers;
    assert.equal(headers?.["accept"], "text/event-stream");
    assert.equal(headers?.["content-type"], "application/json");
    assert.equal(Number(headers?.["content-length"]), Buffer.byteLength(JSON.stringify(server.calls[0]?.body)));
  });

  it("reuses one keep-alive connection for consecutive calls", async () => {
    const server = await serve(reply);
    const provider = openAi(server);
    for (let call = 0; call < 3; call++) {
      assert.deepEqual(await collect(provider.stream(request)), ["Hel", "lo"]);
      // The stream returns at [DONE]; the response's end, which frees the connection, is read a few ticks later.
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    assert.equal(server.connectionsOpened(), 1);
    assert.equal(server.connectionsOpen(), 1);
  });

  it("closes the connection when the caller stops reading before the end", async () => {
    const server = await serve(Array.from({ length: 50 }, (_, index) => Buffer.from(chunk(`${index} `))));
    for await (const delta of openAi(server).stream(request)) {
      assert.equal(delta, "0 ");
      break;
    }
    await eventually(() => server.connectionsOpen() === 0, { what: "the connection is closed", timeoutMs: 2_000, intervalMs: 5 });
  });

  it("closes the connection of a failed call instead of reusing it", async () => {
    const server = await serve(`${chunk("partial")}data: {broken\n\n`);
    const error = await failureOf(openAi(server).stream(request));
    assert.match(error.message, /not JSON/);
    await eventually(() => server.connectionsOpen() === 0, { what: "the connection is closed", timeoutMs: 2_000, intervalMs: 5 });
  });

  it("reads only the start of a long error body", async () => {
    const server = await serve(`${"x".repeat(100_000)} not shown`, { status: 500 });
    const error = await failureOf(openAi(server).stream(request));
    assert.equal(error.options.status, 500);
    assert.doesNotMatch(error.message, /not shown/);
    assert.ok(error.message.length < 400);
  });

  it("rejects a base URL that is not http or https without trying to connect", async () => {
    const provider = new OpenAiProvider({ ...settings, baseUrl: "ftp://models.test/v1" }, { timeoutMs: 1_000 });
    const error = await failureOf(provider.stream(request));
    assert.equal(error.options.retryable, false);
    assert.match(error.message, /not a valid http\(s\) URL/);
  });

  it("speaks TLS to an https URL and verifies the server's certificate", { skip: openSslMissing && "openssl is not installed" }, async () => {
    assert.ok(certificates);
    const server = await serve(reply, { tls: certificates });
    const error = await failureOf(openAi(server).stream(request));
    assert.match(error.message, /could not reach the model server \(DEPTH_ZERO_SELF_SIGNED_CERT\)/);
  });

  it(
    "streams over http and https without leaving a socket or timer that keeps the process alive",
    { skip: openSslMissing && "openssl is not installed" },
    async () => {
      assert.ok(certificates);
      const plain = await serve(reply);
      const secure = await serve(reply, { tls: certificates });
      const openAiModule = pathToFileURL(path.resolve("src/providers/llm/openai.ts")).href;
      const script = `
        const { OpenAiProvider } = await import(${JSON.stringify(openAiModule)});
        const request = { task: "reply", messages: [{ role: "user", content: "Hi" }] };
        for (const baseUrl of process.env.BASE_URLS.split(" ")) {
          const provider = new OpenAiProvider({ baseUrl, model: "m", temperature: 0, maxTokens: 16, apiKey: undefined }, { timeoutMs: 60000 });
          let text = "";
          for await (const delta of provider.stream(request)) text += delta;
          for await (const delta of provider.stream(request)) break;
          process.stdout.write(text + "\\n");
        }`;
      const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "--eval", script], {
        env: { ...process.env, NODE_EXTRA_CA_CERTS: certificates.certPath, BASE_URLS: `${plain.url}/v1 ${secure.url}/v1` },
        stdio: ["ignore", "pipe", "inherit"],
      });
      let output = "";
      let doneAt = 0;
      child.stdout.on("data", (data: Buffer) => {
        output += data.toString();
        if (output === "Hello\nHello\n") doneAt = Date.now();
      });
      const [code] = (await once(child, "exit")) as [number | null];
      assert.equal(code, 0);
      assert.equal(output, "Hello\nHello\n");
      assert.ok(Date.now() - doneAt < 1_000, `the process lingered ${Date.now() - doneAt} ms after its last call`);
    },
  );
});
