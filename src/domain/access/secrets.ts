import { createCipheriv, createDecipheriv, createHash, hash, randomBytes, timingSafeEqual } from "node:crypto";

/** A high-entropy credential with a recognisable prefix, e.g. `sk_…`. */
export function newCredential(prefix: string): string {
  return prefix + randomBytes(32).toString("base64url");
}

/**
 * Credentials are 256-bit random strings, so one SHA-256 pass is enough: there is nothing to brute-force. Every
 * request with an API key hashes it; the one-shot `hash` costs half of a `createHash` object's update and digest.
 */
export function hashCredential(credential: string): string {
  return hash("sha256", credential, "hex");
}

export function sameSecret(a: string, b: string): boolean {
  const left = Buffer.from(hashCredential(a), "hex");
  const right = Buffer.from(hashCredential(b), "hex");
  return timingSafeEqual(left, right);
}

export function redact(credential: string): string {
  return `${credential.slice(0, 3)}…${credential.slice(-4)}`;
}

/** AES-256-GCM for secrets that must be read back (a provider's API key); stored as iv.tag.ciphertext. */
export class SecretBox {
  private readonly key: Buffer;

  constructor(keyMaterial: string) {
    this.key = createHash("sha256").update(keyMaterial).digest();
  }

  seal(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
    return [iv, cipher.getAuthTag(), body].map((part) => part.toString("base64url")).join(".");
  }

  open(sealed: string): string {
    const [iv, tag, body] = sealed.split(".").map((part) => Buffer.from(part, "base64url"));
    if (!iv || !tag || !body) throw new Error("malformed sealed secret");
    const decipher = createDecipheriv("aes-256-gcm", this.key, iv);
    decipher.setAuthTag(tag);
    return Buffer.concat([decipher.update(body), decipher.final()]).toString("utf8");
  }
}
