/** A database failure that means "not reachable now" rather than "this request is wrong". */
export function isConnectionFailure(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === "string") {
    if (["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "ENOTFOUND", "57P01", "57P02", "57P03", "08000", "08003", "08006", "08001", "08004"].includes(code)) {
      return true;
    }
  }
  return /Connection terminated|connection timeout|Client has encountered a connection error|terminating connection/i.test(error.message);
}

/**
 * A value as the text of a json/jsonb parameter. JSON.stringify writes a lone surrogate (possible in any decoded
 * request string) as an escape that PostgreSQL refuses; it becomes U+FFFD here, as it does in text columns, where
 * the UTF-8 encoding of the wire replaces it.
 */
export function jsonParam(value: unknown): string {
  const json = JSON.stringify(value);
  // Most values have no escape of that kind at all, and the search costs more than the rest.
  return json.includes("\\u") ? json.replace(/(?<!\\)((?:\\\\)*)\\u(d[89a-f][0-9a-f]{2})/gi, "$1\\ufffd") : json;
}
