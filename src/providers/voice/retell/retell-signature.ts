/**
 * Checks `x-retell-signature` (`v=<ms>,d=<hex HMAC-SHA256(api_key, body + ms)>`, five minutes either way) with
 * retell-sdk's own `verify`, on the body exactly as it arrived. The SDK (about a hundred modules) is loaded at the
 * first Retell request, not at start: most instances never get one.
 */
export async function verifyRetellSignature(rawBody: string, apiKey: string, signature: string): Promise<boolean> {
  const { verify } = await import("retell-sdk");
  try {
    return await verify(rawBody, apiKey, signature);
  } catch {
    return false;
  }
}
