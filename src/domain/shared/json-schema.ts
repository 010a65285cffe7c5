import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

const ajv = new Ajv2020({ allErrors: false, strict: false });
addFormats.default(ajv);
const compiled = new WeakMap<object, ValidateFunction>();

/** Deeper jsonb overflows the embedded database's stack (PGlite aborts near 1,000 levels), so stored JSON is capped. */
export const maxJsonDepth = 64;

/** Whether objects or arrays nest more than `limit` levels; stops descending there, so its recursion is bounded. */
export function nestedDeeperThan(value: unknown, limit: number): boolean {
  if (typeof value !== "object" || value === null) return false;
  if (limit === 0) return true;
  return Object.values(value).some((child) => nestedDeeperThan(child, limit - 1));
}

/** Compiles a project's JSON Schema, returning the reason when it is not a valid schema. */
export function checkJsonSchema(schema: Record<string, unknown>): string | undefined {
  if (nestedDeeperThan(schema, maxJsonDepth)) return `objects or arrays nest more than ${maxJsonDepth} levels deep`;
  try {
    ajv.compile(schema);
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : "invalid JSON Schema";
  }
}

/** Validates data against a schema already checked by `checkJsonSchema`; returns the first problem, if any. */
export function jsonSchemaProblem(schema: Record<string, unknown>, data: unknown): string | undefined {
  let validate = compiled.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    compiled.set(schema, validate);
  }
  if (validate(data)) return undefined;
  const [first] = validate.errors ?? [];
  return first ? `${first.instancePath || "input"} ${first.message ?? "is invalid"}` : "input does not match the schema";
}
