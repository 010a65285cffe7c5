import http, { type IncomingMessage } from "node:http";
import https from "node:https";
import { isIP } from "node:net";
import { MAX_TOOL_RESULT_BYTES, type ToolPost, type ToolPostResult, type ToolTransport } from "../../domain/tools/ports.js";
import { guardedLookup, isInternalAddress, RefusedAddressError } from "./network-guard.js";

/**
 * Tool requests over HTTP(S): one POST per call, no redirects followed (a 3xx is an answer like any other non-2xx),
 * the whole exchange bounded by the tool's timeout, and only the first 16 KiB of the body read. Unless internal
 * networks are allowed, a receiver whose address is loopback, private or link-local is refused before connecting.
 */
export class HttpToolTransport implements ToolTransport {
  constructor(private readonly options: { allowInternalNetworks: boolean }) {}

  post(request: ToolPost): Promise<ToolPostResult> {
    const url = new URL(request.url);
    const secure = url.protocol === "https:";
    const host = url.hostname.replace(/^\[|\]$/g, "");
    if (!this.options.allowInternalNetworks && isIP(host) !== 0 && isInternalAddress(host)) {
      return Promise.resolve({ kind: "refused", reason: `${host} is an internal address` });
    }
    return new Promise((resolve) => {
      let settled = false;
      const settle = (result: ToolPostResult): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(result);
      };
      const outgoing = (secure ? https : http).request(url, {
        method: "POST",
        // A connection per call: receivers are many and called rarely, and nothing idle is left to keep open.
        agent: false,
        headers: { ...request.headers, "content-length": String(Buffer.byteLength(request.body)) },
        ...(this.options.allowInternalNetworks ? {} : { lookup: guardedLookup }),
      });
      const timer = setTimeout(() => {
        settle({ kind: "timeout" });
        outgoing.destroy();
      }, request.timeoutMs);
      outgoing.on("error", (error) => {
        if (error instanceof RefusedAddressError) settle({ kind: "refused", reason: error.message });
        else settle({ kind: "failed", reason: describe(error) });
      });
      outgoing.on("response", (response) => {
        readPrefix(response).then(
          ({ body, truncated }) => {
            settle({ kind: "answered", status: response.statusCode ?? 0, contentType: String(response.headers["content-type"] ?? ""), body, truncated });
            if (truncated) outgoing.destroy();
          },
          (error: unknown) => settle({ kind: "failed", reason: describe(error) }),
        );
      });
      outgoing.end(request.body);
    });
  }
}

function describe(error: unknown): string {
  const code = typeof error === "object" && error !== null && "code" in error && typeof error.code === "string" ? error.code : undefined;
  return code ?? (error instanceof Error ? error.message : "the request failed");
}

/** The body's first bytes, cut at a character boundary: a character the limit splits is left out, not mangled. */
function readPrefix(response: IncomingMessage): Promise<{ body: string; truncated: boolean }> {
  return new Promise((resolve, reject) => {
    const decoder = new TextDecoder();
    let body = "";
    let bytes = 0;
    response.on("data", (chunk: Buffer) => {
      const room = MAX_TOOL_RESULT_BYTES - bytes;
      if (chunk.length >= room && room >= 0) {
        body += decoder.decode(chunk.subarray(0, room), { stream: true });
        bytes = MAX_TOOL_RESULT_BYTES;
        response.removeAllListeners("data");
        response.removeAllListeners("end");
        response.pause();
        resolve({ body, truncated: chunk.length > room || !response.complete });
        return;
      }
      bytes += chunk.length;
      body += decoder.decode(chunk, { stream: true });
    });
    response.on("end", () => resolve({ body: body + decoder.decode(), truncated: false }));
    response.on("error", reject);
    response.on("aborted", () => reject(new Error("the response was cut off")));
  });
}
