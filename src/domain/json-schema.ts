import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import addFormats from "ajv-formats";

const ajv = new Ajv2020({ allErrors: false, strict: false });
addFormats.default(ajv);
const compiled = new WeakMap<object, ValidateFunction>();

/** Compiles a project's JSON Schema, returning the reason when it is not a valid schema. */
export function checkJsonSchema(schema: Record<string, unknown>): string | undefined {
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
