import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ConfigError, loadConfig } from "../../src/config.js";
import { InvalidOperationError } from "../../src/domain/shared/errors.js";
import { recordingKey, recordingLink, RecordingUrlSigner } from "../../src/domain/calls/recordings.js";
import { S3RecordingStorage } from "../../src/store/recording-objects.js";
import { objectStoreCredentials, startObjectStore, type ObjectStore } from "../support/object-store.js";

async function collect(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks);
}

describe("recordings in S3-compatible object storage (s3rver on loopback)", () => {
  let store: ObjectStore;
  let storage: S3RecordingStorage;
  const data = Buffer.from(Array.from({ length: 5000 }, (_, i) => i % 253));
  const key = recordingKey("0190f2a4-7c1e-7000-8000-000000000002");
  const presentedKey = recordingKey("0190f2a4-7c1e-7000-8000-000000000004");
  const location = () => ({
    bucket: store.bucket,
    prefix: "tenant-a/calls/",
    endpoint: store.endpoint,
    region: "us-east-1",
    forcePathStyle: true,
    credentials: objectStoreCredentials,
  });

  before(async () => {
    store = await startObjectStore();
    storage = new S3RecordingStorage(location());
  });
  after(async () => {
    storage.close();
    await store.stop();
  });

  test("a stored recording reads back whole, and by inclusive byte ranges", async () => {
    await storage.put(key, data);
    assert.equal(await storage.size(key), 5000);
    assert.deepEqual(await collect(storage.read(key)), data);
    // Not { start: 0, end: 0 }: s3rver takes the end 0 for "to the end", where S3 sends one byte.
    assert.deepEqual(await collect(storage.read(key, { start: 0, end: 1 })), data.subarray(0, 2));
    assert.deepEqual(await collect(storage.read(key, { start: 1000, end: 1999 })), data.subarray(1000, 2000));
    assert.deepEqual(await collect(storage.read(key, { start: 4990, end: 4999 })), data.subarray(4990));
  });

  test("objects go under the prefix, and the store's presigned URL serves them with byte ranges", async () => {
    await storage.put(presentedKey, data);
    const url = await storage.presignedUrl(presentedKey, 600);
    const parsed = new URL(url);
    assert.equal(parsed.origin, store.endpoint);
    assert.equal(parsed.pathname, `/${store.bucket}/tenant-a/calls/${presentedKey}`);
    assert.equal(parsed.searchParams.get("X-Amz-Expires"), "600");
    const whole = await fetch(url);
    assert.equal(whole.status, 200);
    assert.deepEqual(Buffer.from(await whole.arrayBuffer()), data);
    const part = await fetch(url, { headers: { range: "bytes=100-199" } });
    assert.equal(part.status, 206);
    assert.equal(part.headers.get("content-range"), "bytes 100-199/5000");
    assert.deepEqual(Buffer.from(await part.arrayBuffer()), data.subarray(100, 200));
  });

  test("a presigned URL is signed with the access key id, and carries no secret", async () => {
    // s3rver does not check V4 signatures, so the store cannot show a forged one refused: the URL's parts are checked.
    const url = new URL(await storage.presignedUrl(recordingKey("0190f2a4-7c1e-7000-8000-000000000003"), 600));
    assert.equal(url.searchParams.get("X-Amz-Algorithm"), "AWS4-HMAC-SHA256");
    assert.match(url.searchParams.get("X-Amz-Credential") ?? "", /^S3RVER\/\d{8}\/us-east-1\/s3\/aws4_request$/);
    assert.match(url.searchParams.get("X-Amz-Signature") ?? "", /^[0-9a-f]{64}$/);
    const other = new S3RecordingStorage({ ...location(), credentials: { accessKeyId: "S3RVER", secretAccessKey: "another-secret" } });
    try {
      const otherUrl = new URL(await other.presignedUrl(recordingKey("0190f2a4-7c1e-7000-8000-000000000003"), 600));
      assert.notEqual(otherUrl.searchParams.get("X-Amz-Signature"), url.searchParams.get("X-Amz-Signature"), "the signature depends on the secret");
      assert.ok(!otherUrl.href.includes("another-secret"));
    } finally {
      other.close();
    }
  });

  test("recording_url is the presigned URL, for as long as Parley's own links last", async () => {
    const signer = new RecordingUrlSigner("a-secret-that-is-long-enough-for-hmac", 900);
    const url = new URL(await recordingLink(storage, signer, "https://parley.example", "call-1", key));
    assert.equal(url.origin, store.endpoint);
    assert.equal(url.searchParams.get("X-Amz-Expires"), "900");
  });

  test("a key with nothing stored has no size and its stream fails", async () => {
    assert.equal(await storage.size("missing.wav"), undefined);
    await assert.rejects(collect(storage.read("missing.wav")));
  });

  test("keys that are not one plain file name are refused before any request", async () => {
    for (const key of ["../escape.wav", "a/b.wav", "..", ".hidden", ""]) {
      await assert.rejects(storage.put(key, data), InvalidOperationError, key);
      await assert.rejects(storage.size(key), InvalidOperationError, key);
      assert.throws(() => storage.read(key), InvalidOperationError, key);
    }
  });
});

describe("RECORDINGS_URL and its settings", () => {
  test("unset, recordings stay in the data folder", () => {
    assert.deepEqual(loadConfig({}).recordings, { kind: "folder" });
  });

  test("s3://bucket/prefix with an endpoint, a region and credentials", () => {
    const recordings = loadConfig({
      RECORDINGS_URL: "s3://parley-audio/prod/recordings/",
      RECORDINGS_S3_ENDPOINT: "https://account.r2.cloudflarestorage.com",
      RECORDINGS_S3_REGION: "auto",
      RECORDINGS_S3_ACCESS_KEY_ID: "AKIDEXAMPLE",
      RECORDINGS_S3_SECRET_ACCESS_KEY: "wJalrXUtnFEMI/K7MDENG",
    }).recordings;
    assert.deepEqual(recordings, {
      kind: "s3",
      bucket: "parley-audio",
      prefix: "prod/recordings/",
      endpoint: "https://account.r2.cloudflarestorage.com",
      region: "auto",
      forcePathStyle: true,
      credentials: { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG" },
    });
  });

  test("on AWS itself: no prefix, virtual-hosted buckets, AWS_REGION and the SDK's own credentials", () => {
    assert.deepEqual(loadConfig({ RECORDINGS_URL: "s3://parley-audio", AWS_REGION: "eu-west-1" }).recordings, {
      kind: "s3",
      bucket: "parley-audio",
      prefix: "",
      endpoint: undefined,
      region: "eu-west-1",
      forcePathStyle: false,
      credentials: undefined,
    });
  });

  test("bad settings are refused, and no message repeats a secret", () => {
    const secret = "wJalrXUtnFEMI-K7MDENG";
    const refused = (env: Record<string, string>, pattern: RegExp) => {
      assert.throws(() => loadConfig(env), (error: unknown) => {
        assert.ok(error instanceof ConfigError);
        assert.match(error.message, pattern);
        assert.ok(!error.message.includes(secret), error.message);
        return true;
      });
    };
    refused({ RECORDINGS_URL: "https://parley-audio.s3.amazonaws.com" }, /s3:\/\/bucket/);
    refused({ RECORDINGS_URL: `s3://AKID:${secret}@parley-audio/x` }, /RECORDINGS_S3_ACCESS_KEY_ID/);
    refused({ RECORDINGS_URL: "s3://Bad_Bucket/x" }, /bucket name/);
    refused({ RECORDINGS_URL: "s3://parley-audio/x?versionId=1" }, /s3:\/\/bucket/);
    refused({ RECORDINGS_URL: "s3://parley-audio", RECORDINGS_S3_ENDPOINT: "minio:9000" }, /RECORDINGS_S3_ENDPOINT/);
    refused({ RECORDINGS_URL: "s3://parley-audio", RECORDINGS_S3_SECRET_ACCESS_KEY: secret }, /go together/);
    refused({ RECORDINGS_S3_SECRET_ACCESS_KEY: secret }, /RECORDINGS_URL is not/);
    refused({ RECORDINGS_URL: "s3://parley-audio", RECORDINGS_S3_FORCE_PATH_STYLE: "maybe" }, /true or false/);
  });
});
