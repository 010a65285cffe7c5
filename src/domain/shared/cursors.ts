import { RequestValidationError } from "./errors.js";

/**
 * Opaque URL-safe Base64 cursors. A history cursor is a position between two messages: `p` is the seq of the message
 * just before it (0 = before the first message). A search cursor carries the seq of the last match returned.
 * Each names its thread so that one thread's cursor is refused on another.
 */
interface CursorBody {
  k: "h" | "s";
  t: string;
  p: number;
}

export function encodeCursor(kind: "history" | "search", threadId: string, position: number): string {
  const body: CursorBody = { k: kind === "history" ? "h" : "s", t: threadId, p: position };
  return Buffer.from(JSON.stringify(body)).toString("base64url");
}

/** The 422 every cursor problem gets, at `["query","cursor"]`. */
export function invalidCursor(cursor: string): RequestValidationError {
  return new RequestValidationError([
    { type: "value_error", loc: ["query", "cursor"], msg: "Value error, Invalid cursor", input: cursor, ctx: { error: {} } },
  ]);
}

/** The JSON object inside an opaque cursor; anything else is `invalidCursor`. */
export function cursorObject(cursor: string): Record<string, unknown> {
  if (!/^[A-Za-z0-9_-]+={0,2}$/.test(cursor)) throw invalidCursor(cursor);
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    throw invalidCursor(cursor);
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw invalidCursor(cursor);
  return body as Record<string, unknown>;
}

export function decodeCursor(kind: "history" | "search", threadId: string, cursor: string): number {
  const { k, t, p } = cursorObject(cursor) as Partial<CursorBody>;
  if (k !== (kind === "history" ? "h" : "s") || t !== threadId || typeof p !== "number" || !Number.isSafeInteger(p) || p < 0) {
    throw invalidCursor(cursor);
  }
  return p;
}
