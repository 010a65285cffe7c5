/**
 * PostgreSQL cannot store U+0000 in `text` (22021) or `jsonb` (22P05). HTTP bodies that carry one are refused by
 * the error mapper once the database objects; input from a socket or a webhook has no HTTP answer to fall back on,
 * so its edge checks with `containsNul` before the text goes further, and refuses with this same message.
 */
export const nulRefusal = "Text must not contain NUL (U+0000) characters";

/** Whether the value holds U+0000 in any string, object key or nested element. */
export function containsNul(value: unknown): boolean {
  if (typeof value === "string") return value.includes("\u0000");
  if (Array.isArray(value)) return value.some(containsNul);
  if (typeof value === "object" && value !== null) return Object.entries(value).some(([key, inner]) => key.includes("\u0000") || containsNul(inner));
  return false;
}
