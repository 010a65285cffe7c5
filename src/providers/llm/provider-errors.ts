import { ProviderError } from "./types.js";

/** Statuses worth one more try: timeouts, conflicts, rate limits and server-side failures (Anthropic's 529 included). */
function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/** What every adapter throws once the caller's signal fires; the caller, knowing it aborted, can tell it from a failure. */
export function abortedError(): ProviderError {
  return new ProviderError("the request was aborted by the caller", { retryable: false });
}

const MAX_SUMMARY_CHARS = 300;
const MAX_ERROR_BODY_BYTES = 8192;

/**
 * Removes anything that looks like a credential before text from a vendor reaches a log or an API response:
 * the key itself, `sk-…`-style keys (OpenAI echoes a masked key on a 401), bearer tokens and long opaque tokens.
 */
export function redact(text: string, secrets: readonly (string | undefined)[]): string {
  let clean = text;
  for (const secret of secrets) {
    if (secret !== undefined && secret.length >= 4) clean = clean.split(secret).join("[redacted]");
  }
  return clean
    .replace(/\b(?:sk|pk|rk)-[A-Za-z0-9_*.-]{4,}/g, "[redacted]")
    .replace(/\bBearer\s+\S+/gi, "Bearer [redacted]")
    .replace(/[A-Za-z0-9_-]{32,}/g, "[redacted]");
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function text(value: unknown): string | undefined {
  return typeof value === "string" && value.trim() !== "" ? value.trim() : undefined;
}

/**
 * The human part of a vendor error payload, whichever server sent it: OpenAI and Anthropic nest
 * `{ error: { type, message } }`, Ollama sends `{ error: "…" }`, vLLM and others a top-level `message` or `detail`.
 */
function describeErrorPayload(payload: unknown): string | undefined {
  if (!isRecord(payload)) return undefined;
  const error = payload["error"];
  if (text(error)) return text(error);
  if (isRecord(error)) {
    const type = text(error["type"]) ?? text(error["code"]);
    const message = text(error["message"]);
    if (type && message) return `${type}: ${message}`;
    return message ?? type;
  }
  return text(payload["message"]) ?? text(payload["detail"]);
}

async function readPrefix(body: AsyncIterable<Uint8Array>): Promise<string> {
  const decoder = new TextDecoder();
  let text = "";
  try {
    for await (const chunk of body) {
      text += decoder.decode(chunk, { stream: true });
      if (text.length >= MAX_ERROR_BODY_BYTES) break;
    }
  } catch {
    // The body is only decoration for the status; a broken one still leaves a useful error.
  }
  return text;
}

function summarizeBody(body: string): string | undefined {
  let summary: string | undefined;
  try {
    summary = describeErrorPayload(JSON.parse(body));
  } catch {
    summary = text(body.replace(/<[^>]*>/g, " "));
  }
  if (summary === undefined) return undefined;
  const oneLine = summary.replace(/\s+/g, " ");
  return oneLine.length > MAX_SUMMARY_CHARS ? `${oneLine.slice(0, MAX_SUMMARY_CHARS)}…` : oneLine;
}

/** A ProviderError for a non-2xx answer, the start of its body summarized (and redacted) into the message. */
export async function httpStatusError(
  provider: string,
  status: number,
  body: AsyncIterable<Uint8Array>,
  secrets: readonly (string | undefined)[],
): Promise<ProviderError> {
  const summary = summarizeBody(await readPrefix(body));
  const detail = summary === undefined ? "" : `: ${redact(summary, secrets)}`;
  return new ProviderError(`${provider} returned HTTP ${status}${detail}`, {
    status,
    retryable: isRetryableStatus(status),
  });
}

/** A ProviderError for an error a vendor reported inside an otherwise successful (HTTP 200) stream. */
export function streamedError(
  provider: string,
  payload: unknown,
  status: number | undefined,
  secrets: readonly (string | undefined)[],
): ProviderError {
  const summary = describeErrorPayload(payload) ?? "unknown error";
  const retryable = status === undefined ? /server_error|overload|rate_limit|timeout|unavailable/i.test(summary) : isRetryableStatus(status);
  return new ProviderError(`${provider} reported an error mid-stream: ${redact(summary, secrets).slice(0, MAX_SUMMARY_CHARS)}`, {
    ...(status === undefined ? {} : { status }),
    retryable,
  });
}

/** Parses one event's JSON; a malformed event means a broken proxy or server, which a retry will not fix. */
export function parseEventJson(provider: string, data: string): unknown {
  try {
    return JSON.parse(data);
  } catch {
    throw new ProviderError(`${provider} sent an event that is not JSON`, { retryable: false });
  }
}
