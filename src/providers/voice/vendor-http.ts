/** A telephony vendor's REST API failed: it refused, failed, or did not answer in time. The message says which. */
export class VendorError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = "VendorError";
  }
}

export interface VendorRequest {
  vendor: string;
  method: "POST" | "GET" | "DELETE";
  url: string;
  headers: Record<string, string>;
  body?: string;
  timeoutMs: number;
}

/** The longest stretch of a vendor's error body worth quoting in a call's error. */
const quotedBytes = 300;

/**
 * One request to a vendor's REST API, with a deadline: a vendor that hangs must not hold a call (or the request that
 * places it) forever. Answers the parsed JSON body (undefined for an empty one); anything but a 2xx is a VendorError.
 */
export async function vendorRequest(request: VendorRequest): Promise<unknown> {
  let response: Response;
  try {
    response = await fetch(request.url, {
      method: request.method,
      headers: request.headers,
      ...(request.body !== undefined ? { body: request.body } : {}),
      signal: AbortSignal.timeout(request.timeoutMs),
    });
  } catch (error) {
    if (error instanceof DOMException && error.name === "TimeoutError") {
      throw new VendorError(`${request.vendor} did not answer within ${request.timeoutMs / 1000} s`);
    }
    throw new VendorError(`${request.vendor} could not be reached: ${error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error)}`);
  }
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    const timedOut = error instanceof DOMException && error.name === "TimeoutError";
    throw new VendorError(timedOut ? `${request.vendor} did not finish answering within ${request.timeoutMs / 1000} s` : `${request.vendor}'s answer broke off`);
  }
  if (!response.ok) {
    throw new VendorError(`${request.vendor} answered ${response.status}: ${errorDetail(text)}`, response.status);
  }
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new VendorError(`${request.vendor} answered ${response.status} with a body that is not JSON`);
  }
}

/** The vendor's own words for an error (`message`, as both Twilio and Retell put it), else the start of the body. */
function errorDetail(text: string): string {
  try {
    const parsed = JSON.parse(text) as unknown;
    if (typeof parsed === "object" && parsed !== null && "message" in parsed && typeof parsed.message === "string") return parsed.message.slice(0, quotedBytes);
  } catch {
    // not JSON: quote the text itself
  }
  return text.slice(0, quotedBytes) || "(empty body)";
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * A vendor's webhook as its signature covers it, for the vendor's own code to verify before anything in it is used
 * or looked up beyond what finds the key.
 */
export interface SignedWebhook {
  /** The body exactly as it arrived. */
  rawBody: string;
  /** The vendor's signature header. */
  signature: string;
  /** The URL the vendor called, as it was given it (`PUBLIC_BASE_URL`, then the request's path and query). */
  url: string;
}
