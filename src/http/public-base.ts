/** Where links that Parley hands out (recording URLs) point. */
export interface PublicAddressSettings {
  /** `PUBLIC_BASE_URL`, already checked to be an http(s) URL without query or fragment. */
  publicBaseUrl: string | undefined;
  /** `TRUST_PROXY_HEADERS`: the server sits behind a proxy that sets `X-Forwarded-Host` and `X-Forwarded-Proto`. */
  trustProxyHeaders: boolean;
}

const label = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?";
const hostAndPort = new RegExp(`^(?:${label}(?:\\.${label})*\\.?|\\[[0-9A-Fa-f:.]{2,45}\\])(?::(\\d{1,5}))?$`);

/** A DNS name, an IPv4 address or a bracketed IPv6 address, with an optional port: nothing that could end the authority. */
function validHost(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const match = hostAndPort.exec(value);
  if (!match) return undefined;
  const port = match[1];
  return port === undefined || Number(port) <= 65535 ? value : undefined;
}

function firstValue(header: string | string[] | undefined): string | undefined {
  const raw = Array.isArray(header) ? header[0] : header;
  return raw?.split(",")[0]?.trim();
}

/**
 * The base of absolute links, without a trailing slash: `PUBLIC_BASE_URL` when set; else, behind a trusted proxy,
 * its forwarded host and scheme; else the request's `Host`. A header is used only when it is a plain host[:port]
 * (a client choosing `Host: evil.example/x?y=` must not be able to rewrite the link). Without any valid host the
 * base is empty and the links are relative to the server that answered.
 */
export function publicBaseOf(request: { headers: Record<string, string | string[] | undefined>; protocol: string }, settings: PublicAddressSettings): string {
  if (settings.publicBaseUrl !== undefined) return settings.publicBaseUrl.replace(/\/+$/, "");
  if (settings.trustProxyHeaders) {
    const host = validHost(firstValue(request.headers["x-forwarded-host"]));
    const scheme = firstValue(request.headers["x-forwarded-proto"])?.toLowerCase();
    if (host !== undefined) return `${scheme === "https" ? "https" : scheme === "http" ? "http" : request.protocol}://${host}`;
  }
  const host = validHost(firstValue(request.headers.host));
  return host === undefined ? "" : `${request.protocol}://${host}`;
}
