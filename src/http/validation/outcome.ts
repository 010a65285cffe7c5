/** What a leaf validator reports: the coerced value, or pydantic's error without its location and input. */
export interface LeafError {
  type: string;
  msg: string;
  ctx?: Record<string, unknown>;
}

export type Outcome = { ok: true; value: unknown } | { ok: false; error: LeafError };

export function ok(value: unknown): Outcome {
  return { ok: true, value };
}

export function fail(type: string, msg: string, ctx?: Record<string, unknown>): Outcome {
  return { ok: false, error: ctx === undefined ? { type, msg } : { type, msg, ctx } };
}
