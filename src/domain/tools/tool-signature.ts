import { createHmac } from "node:crypto";

/** The header every tool request carries; Retell's webhook scheme, so that receivers can verify it with Retell's code. */
export const TOOL_SIGNATURE_HEADER = "x-parley-signature";

/** `v=<ms>,d=<hex HMAC-SHA256(secret, body + ms)>` over the body exactly as sent. */
export function signToolRequest(body: string, secret: string, nowMs: number): string {
  const digest = createHmac("sha256", secret).update(body + String(nowMs)).digest("hex");
  return `v=${nowMs},d=${digest}`;
}
