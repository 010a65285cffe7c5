import { createHmac, timingSafeEqual } from "node:crypto";

/** Where call recordings are kept: a key per recording (see `recordingKey`), whole writes, ranged reads. */
export interface RecordingStorage {
  put(key: string, data: Buffer): Promise<void>;
  /** Bytes stored under the key, or undefined when there is nothing. */
  size(key: string): Promise<number | undefined>;
  /** The bytes, or the inclusive byte range of them; a missing key makes the stream fail. */
  read(key: string, range?: ByteRange): NodeJS.ReadableStream;
  /**
   * A URL at which the store itself serves the recording for `ttlSeconds`, where it can hand one out (object storage
   * presigns). Without it, recordings are served by Parley at links that RecordingUrlSigner signs.
   */
  presignedUrl?(key: string, ttlSeconds: number): Promise<string>;
  /** Lets go of connections to the store, when the server stops. */
  close?(): void;
}

/** An inclusive byte range, as in `Content-Range: bytes start-end/size`. */
export interface ByteRange {
  start: number;
  end: number;
}

export function recordingKey(callId: string): string {
  return `${callId}.wav`;
}

/**
 * Signs recording URLs for a limited time: `/recordings/{callId}.wav?expires=UNIX&signature=HEX`, the signature an
 * HMAC-SHA256 over the call id and the expiry. No state is kept, so any instance sharing the secret can check it.
 */
export class RecordingUrlSigner {
  constructor(
    private readonly secret: string,
    readonly ttlSeconds: number,
  ) {
    if (secret === "") throw new Error("the recording URL secret must not be empty");
    if (!Number.isInteger(ttlSeconds) || ttlSeconds < 1) {
      throw new Error("the recording URL lifetime must be a whole number of seconds, at least 1");
    }
  }

  /** `now` in milliseconds since the epoch, as `Date.now()`; `expires` in seconds. */
  sign(callId: string, now: number = Date.now()): { path: string; expires: number } {
    const expires = Math.floor(now / 1000) + this.ttlSeconds;
    const signature = this.signature(callId, String(expires));
    return { path: `/recordings/${encodeURIComponent(callId)}.wav?expires=${expires}&signature=${signature}`, expires };
  }

  /** True only for this call's signature over this expiry, before that expiry. */
  verify(callId: string, expires: string | undefined, signature: string | undefined, now: number = Date.now()): boolean {
    if (expires === undefined || signature === undefined) return false;
    if (!/^\d{1,15}$/.test(expires) || !/^[0-9a-f]{64}$/.test(signature)) return false;
    if (Number(expires) * 1000 <= now) return false;
    return timingSafeEqual(Buffer.from(this.signature(callId, expires), "hex"), Buffer.from(signature, "hex"));
  }

  /** The newline cannot occur in the digits of the expiry, so no other call id and expiry sign the same text. */
  private signature(callId: string, expires: string): string {
    return createHmac("sha256", this.secret).update(`${callId}\n${expires}`).digest("hex");
  }
}

/**
 * A call's `recording_url`: the store's own presigned URL where it hands one out, for as long as Parley's signed links
 * last; otherwise Parley's signed link under `base` (the public address of the request, or "").
 */
export function recordingLink(storage: RecordingStorage, signer: RecordingUrlSigner, base: string, callId: string, key: string): Promise<string> {
  if (storage.presignedUrl) return storage.presignedUrl(key, signer.ttlSeconds);
  return Promise.resolve(base + signer.sign(callId).path);
}

/**
 * A `Range` request header (RFC 9110 §14.1.2) for a representation of `size` bytes. Only a single byte range is
 * served: `bytes=0-99`, `bytes=100-` (to the end) or `bytes=-500` (the last 500 bytes), with the end clamped to the
 * size. Returns undefined when the header is absent, invalid, of another unit or asks for several ranges: the
 * RFC lets a server ignore such a header and send the whole representation with 200. Returns "unsatisfiable"
 * when the range starts at or past the end, or is the empty suffix `bytes=-0`.
 */
export function parseRangeHeader(header: string | undefined, size: number): ByteRange | "unsatisfiable" | undefined {
  if (header === undefined) return undefined;
  const specifier = /^\s*bytes=(.*)$/i.exec(header)?.[1];
  if (specifier === undefined) return undefined;
  const specs = specifier
    .split(",")
    .map((spec) => spec.trim())
    .filter((spec) => spec !== "");
  const spec = specs.length === 1 ? /^(\d*)-(\d*)$/.exec(specs[0] ?? "") : null;
  if (!spec) return undefined;
  const [, first = "", last = ""] = spec;
  if (first === "") {
    if (last === "") return undefined;
    const suffix = Number(last);
    if (suffix === 0) return "unsatisfiable";
    // An empty representation has no last bytes to send; the whole of it (nothing) goes with 200.
    if (size === 0) return undefined;
    return { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(first);
  if (last !== "" && Number(last) < start) return undefined;
  if (start >= size) return "unsatisfiable";
  return { start, end: last === "" ? size - 1 : Math.min(Number(last), size - 1) };
}
