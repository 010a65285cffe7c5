import { PassThrough } from "node:stream";
import type { Readable } from "node:stream";
import type { S3Client } from "@aws-sdk/client-s3";
import type { ByteRange, RecordingStorage } from "../domain/calls/recordings.js";
import { assertRecordingKey } from "./recording-files.js";

/** Where recordings go in S3-compatible object storage (`RECORDINGS_URL=s3://bucket/prefix` and its settings). */
export interface S3Location {
  bucket: string;
  /** Put before every key: empty, or ending in "/". */
  prefix: string;
  /** Another service than AWS S3 (R2, MinIO, GCS interop): its base URL; undefined for AWS. */
  endpoint: string | undefined;
  region: string;
  /** `endpoint/bucket/key` rather than `bucket.endpoint/key`, as MinIO and most self-hosted stores want. */
  forcePathStyle: boolean;
  /** Undefined: the AWS SDK's own chain (AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, shared config, instance role). */
  credentials: { accessKeyId: string; secretAccessKey: string } | undefined;
}

interface Sdk {
  client: S3Client;
  s3: typeof import("@aws-sdk/client-s3");
  presign: (typeof import("@aws-sdk/s3-request-presigner"))["getSignedUrl"];
}

/** The object store's "no such key" answers: HeadObject has no body, so only its status says so. */
function isMissing(error: unknown): boolean {
  const failure = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return failure.name === "NotFound" || failure.name === "NoSuchKey" || failure.$metadata?.httpStatusCode === 404;
}

/**
 * Recordings as objects in S3-compatible storage, one per key under the prefix. Links to them are the store's own
 * presigned GET URLs, so the audio goes from the store to the listener, byte ranges included, without Parley.
 * The AWS SDK (~25 MB of memory) is loaded at the first use, so an instance that keeps recordings in its folder
 * never loads it.
 */
export class S3RecordingStorage implements RecordingStorage {
  private sdk: Promise<Sdk> | undefined;

  constructor(private readonly location: S3Location) {}

  async put(key: string, data: Buffer): Promise<void> {
    const { client, s3 } = await this.load();
    await client.send(new s3.PutObjectCommand({ Bucket: this.location.bucket, Key: this.objectKey(key), Body: data, ContentType: "audio/wav" }));
  }

  async size(key: string): Promise<number | undefined> {
    const { client, s3 } = await this.load();
    try {
      const head = await client.send(new s3.HeadObjectCommand({ Bucket: this.location.bucket, Key: this.objectKey(key) }));
      return head.ContentLength;
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  read(key: string, range?: ByteRange): NodeJS.ReadableStream {
    const objectKey = this.objectKey(key);
    const output = new PassThrough();
    void (async () => {
      const { client, s3 } = await this.load();
      const object = await client.send(
        new s3.GetObjectCommand({ Bucket: this.location.bucket, Key: objectKey, ...(range ? { Range: `bytes=${range.start}-${range.end}` } : {}) }),
      );
      // In Node the SDK's body is an http.IncomingMessage.
      const body = object.Body as Readable | undefined;
      if (!body) throw new Error(`the object store sent no body for ${objectKey}`);
      body.on("error", (error) => output.destroy(error));
      body.pipe(output);
    })().catch((error: unknown) => output.destroy(error as Error));
    return output;
  }

  async presignedUrl(key: string, ttlSeconds: number): Promise<string> {
    const { client, s3, presign } = await this.load();
    return presign(client, new s3.GetObjectCommand({ Bucket: this.location.bucket, Key: this.objectKey(key) }), { expiresIn: ttlSeconds });
  }

  close(): void {
    void this.sdk?.then(({ client }) => client.destroy(), () => undefined);
  }

  private objectKey(key: string): string {
    assertRecordingKey(key);
    return this.location.prefix + key;
  }

  private load(): Promise<Sdk> {
    this.sdk ??= (async () => {
      const [s3, presigner] = await Promise.all([import("@aws-sdk/client-s3"), import("@aws-sdk/s3-request-presigner")]);
      const { endpoint, region, forcePathStyle, credentials } = this.location;
      const client = new s3.S3Client({ region, forcePathStyle, ...(endpoint ? { endpoint } : {}), ...(credentials ? { credentials } : {}) });
      return { client, s3, presign: presigner.getSignedUrl };
    })();
    return this.sdk;
  }
}
