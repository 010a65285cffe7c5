/** One item of a FastAPI/pydantic-v2 422 body, keys in the order FastAPI emits them. */
export type Loc = (string | number)[];

export interface ValidationIssue {
  type: string;
  loc: Loc;
  msg: string;
  input: unknown;
  ctx?: Record<string, unknown>;
}

export type RequestPart = "path" | "query" | "header" | "body";
