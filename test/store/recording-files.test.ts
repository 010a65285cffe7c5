import assert from "node:assert/strict";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { after, describe, test } from "node:test";
import { InvalidOperationError } from "../../src/domain/shared/errors.js";
import { parseRangeHeader, recordingKey, RecordingUrlSigner } from "../../src/domain/calls/recordings.js";
import { FileRecordingStorage } from "../../src/store/recording-files.js";

async function collect(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks);
}

describe("file recording storage", async () => {
  const root = await mkdtemp(path.join(tmpdir(), "parley-recordings-"));
  after(() => rm(root, { recursive: true, force: true }));
  const storage = new FileRecordingStorage(path.join(root, "recordings"));
  const data = Buffer.from(Array.from({ length: 1000 }, (_, i) => i % 251));

  test("a stored recording reads back whole, and by inclusive byte ranges", async () => {
    const key = recordingKey("0190f2a4-7c1e-7000-8000-000000000001");
    await storage.put(key, data);
    assert.equal(await storage.size(key), 1000);
    assert.deepEqual(await collect(storage.read(key)), data);
    assert.deepEqual(await collect(storage.read(key, { start: 0, end: 0 })), data.subarray(0, 1));
    assert.deepEqual(await collect(storage.read(key, { start: 100, end: 199 })), data.subarray(100, 200));
    assert.deepEqual(await collect(storage.read(key, { start: 990, end: 999 })), data.subarray(990));
  });

  test("writing a key again replaces the recording and leaves no temporary file", async () => {
    await storage.put("replaced.wav", data);
    await storage.put("replaced.wav", Buffer.from("short"));
    assert.equal(await storage.size("replaced.wav"), 5);
    assert.deepEqual((await readdir(path.join(root, "recordings"))).filter((name) => name.startsWith(".")), []);
  });

  test("a key with nothing stored has no size and its stream fails", async () => {
    assert.equal(await storage.size("missing.wav"), undefined);
    await assert.rejects(collect(storage.read("missing.wav")), { code: "ENOENT" });
  });

  test("keys that could leave the folder or name a hidden file are refused", async () => {
    for (const key of ["../escape.wav", "a/b.wav", "..", "a\\b.wav", ".hidden", "", "x..wav", "é.wav"]) {
      await assert.rejects(storage.put(key, data), InvalidOperationError, key);
      await assert.rejects(storage.size(key), InvalidOperationError, key);
      assert.throws(() => storage.read(key), InvalidOperationError, key);
    }
  });
});

describe("recording URL signer", () => {
  const signer = new RecordingUrlSigner("a-secret-that-is-long-enough-for-hmac", 600);
  const now = Date.UTC(2025, 0, 1, 12, 0, 0);

  function query(url: string): { expires: string | undefined; signature: string | undefined } {
    const params = new URL(url, "http://localhost").searchParams;
    return { expires: params.get("expires") ?? undefined, signature: params.get("signature") ?? undefined };
  }

  test("a fresh signature is accepted until it expires", () => {
    const signed = signer.sign("call-1", now);
    assert.equal(signed.expires, now / 1000 + 600);
    assert.match(signed.path, /^\/recordings\/call-1\.wav\?expires=\d+&signature=[0-9a-f]{64}$/);
    const { expires, signature } = query(signed.path);
    assert.equal(signer.verify("call-1", expires, signature, now), true);
    assert.equal(signer.verify("call-1", expires, signature, now + 599_999), true);
  });

  test("an expired signature is refused", () => {
    const { expires, signature } = query(signer.sign("call-1", now).path);
    assert.equal(signer.verify("call-1", expires, signature, now + 600_000), false);
  });

  test("a signature is refused for another call id", () => {
    const { expires, signature } = query(signer.sign("call-1", now).path);
    assert.equal(signer.verify("call-2", expires, signature, now), false);
  });

  test("a signature is refused with a tampered expiry", () => {
    const { expires, signature } = query(signer.sign("call-1", now).path);
    assert.equal(signer.verify("call-1", String(Number(expires) + 3600), signature, now), false);
  });

  test("a tampered, malformed or missing signature is refused", () => {
    const { expires, signature = "" } = query(signer.sign("call-1", now).path);
    const flipped = `${signature.slice(0, -1)}${signature.endsWith("0") ? "1" : "0"}`;
    for (const candidate of [flipped, signature.toUpperCase(), signature.slice(2), "zz", undefined]) {
      assert.equal(signer.verify("call-1", expires, candidate, now), false, String(candidate));
    }
    assert.equal(signer.verify("call-1", undefined, signature, now), false);
    assert.equal(signer.verify("call-1", "12ab", signature, now), false);
  });

  test("a signature made with another secret is refused", () => {
    const { expires, signature } = query(new RecordingUrlSigner("another-secret-entirely", 600).sign("call-1", now).path);
    assert.equal(signer.verify("call-1", expires, signature, now), false);
  });

  test("call ids are escaped in the path", () => {
    assert.match(signer.sign("a b/c", now).path, /^\/recordings\/a%20b%2Fc\.wav\?/);
  });
});

describe("Range header parsing", () => {
  const cases: [string | undefined, number, ReturnType<typeof parseRangeHeader>][] = [
    [undefined, 1000, undefined],
    ["bytes=0-99", 1000, { start: 0, end: 99 }],
    ["bytes=100-", 1000, { start: 100, end: 999 }],
    ["bytes=-500", 1000, { start: 500, end: 999 }],
    ["bytes=-5000", 1000, { start: 0, end: 999 }],
    ["bytes=900-5000", 1000, { start: 900, end: 999 }],
    ["bytes=999-999", 1000, { start: 999, end: 999 }],
    ["Bytes=0-0", 1000, { start: 0, end: 0 }],
    [" bytes=10-20 ", 1000, { start: 10, end: 20 }],
    ["bytes=1000-", 1000, "unsatisfiable"],
    ["bytes=1000-1001", 1000, "unsatisfiable"],
    ["bytes=-0", 1000, "unsatisfiable"],
    ["bytes=0-", 0, "unsatisfiable"],
    ["bytes=-10", 0, undefined],
    ["bytes=20-10", 1000, undefined],
    ["bytes=-", 1000, undefined],
    ["bytes=a-b", 1000, undefined],
    ["bytes=0-1,5-6", 1000, undefined],
    ["items=0-1", 1000, undefined],
    ["bytes 0-1", 1000, undefined],
    ["bytes=0 - 1", 1000, undefined],
  ];
  for (const [header, size, expected] of cases) {
    test(`the header ${JSON.stringify(header)} on ${size} bytes gives ${JSON.stringify(expected) ?? "no range"}`, () => {
      assert.deepEqual(parseRangeHeader(header, size), expected);
    });
  }
});
