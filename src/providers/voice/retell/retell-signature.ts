import { verify } from "retell-sdk";

/**
 * Checks `x-retell-signature` (`v=<ms>,d=<hex HMAC-SHA256(api_key, body + ms)>`, five minutes either way) with
 * retell-sdk's own `verify`, on the body exactly as it arrived.
 */
export async function verifyRetellSignature(rawBody: string, apiKey: string, signature: string): Promise<boolean> {
  try {
    return await verify(rawBody, apiKey, signature);
  } catch {
    return false;
  }
}
