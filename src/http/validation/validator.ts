import { OptionalKind, type TSchema } from "@sinclair/typebox";
import { validateDateTime } from "./datetime.js";
import type { Loc, RequestPart, ValidationIssue } from "../../domain/shared/validation-issue.js";
import type { LeafError, Outcome } from "./outcome.js";
import { isPlainObject, setOwn } from "./plain-object.js";
import { plural, validateBoolean, validateChoice, validateInteger, validateNumber, validateString } from "./scalars.js";
import { isSchemaNode, numberKeyword, requiredNames, schemaKeyword, schemaList, schemaProperties, type SchemaNode } from "./schema-node.js";
import { validateUuid } from "./uuid.js";

/**
 * Request validation with the semantics FastAPI gets from pydantic v2: `validate_python` in lax
 * mode with `from_attributes=True`, every error collected, each shaped as FastAPI returns it.
 */

export function jsonInvalidIssue(pos: number, msg: string): ValidationIssue {
  return { type: "json_invalid", loc: ["body", pos], msg: "JSON decode error", input: {}, ctx: { error: msg } };
}

function issue(error: LeafError, loc: Loc, input: unknown): ValidationIssue {
  const { type, msg, ctx } = error;
  return ctx === undefined ? { type, loc, msg, input } : { type, loc, msg, input, ctx };
}

function missing(loc: Loc, input: unknown): ValidationIssue {
  return { type: "missing", loc, msg: "Field required", input };
}

function record(outcome: Outcome, input: unknown, loc: Loc, issues: ValidationIssue[]): unknown {
  if (outcome.ok) return outcome.value;
  issues.push(issue(outcome.error, loc, input));
  return input;
}

function unsupported(schema: SchemaNode): Error {
  return new Error(`validator: unsupported schema ${JSON.stringify(schema)}`);
}

/** Defaults are copied, as pydantic copies mutable defaults, and not validated. */
function defaultOf(schema: SchemaNode): unknown {
  const value = schema["default"];
  return typeof value === "object" && value !== null ? structuredClone(value) : value;
}

/** What validating a model or a request part needs to know of its schema, worked out once per schema. */
interface FieldsShape {
  properties: [string, SchemaNode][];
  required: Set<string>;
  declared: Set<string>;
  /** Names of the properties that take every value of a repeated parameter. */
  sequences: Set<string>;
}

const shapes = new WeakMap<SchemaNode, FieldsShape>();

function fieldsShape(schema: SchemaNode): FieldsShape {
  let shape = shapes.get(schema);
  if (!shape) {
    const properties = schemaProperties(schema);
    shape = {
      properties,
      required: requiredNames(schema),
      declared: new Set(properties.map(([name]) => name)),
      sequences: new Set(properties.filter(([, property]) => isSequence(property)).map(([name]) => name)),
    };
    shapes.set(schema, shape);
  }
  return shape;
}

/**
 * A model's fields, or a request part's parameters: present ones validated, absent ones defaulted
 * or missing; with `additionalProperties: false`, each given entry that is not a property is extra.
 */
function validateFields(
  schema: SchemaNode,
  loc: Loc,
  read: (name: string) => unknown,
  missingInput: unknown,
  given: () => [string, unknown][],
  issues: ValidationIssue[],
): Record<string, unknown> {
  const { properties, required, declared } = fieldsShape(schema);
  const output: Record<string, unknown> = {};
  for (const [name, property] of properties) {
    const input = read(name);
    if (input !== undefined) setOwn(output, name, validate(property, input, [...loc, name], issues));
    else if ("default" in property) setOwn(output, name, defaultOf(property));
    else if (required.has(name)) issues.push(missing([...loc, name], missingInput));
  }
  if (schema["additionalProperties"] === false) {
    for (const [name, input] of given()) {
      if (!declared.has(name)) issues.push({ type: "extra_forbidden", loc: [...loc, name], msg: "Extra inputs are not permitted", input });
    }
  }
  return output;
}

function validateModel(schema: SchemaNode, input: unknown, loc: Loc, issues: ValidationIssue[]): unknown {
  if (!isPlainObject(input)) {
    const msg = "Input should be a valid dictionary or object to extract fields from";
    issues.push({ type: "model_attributes_type", loc, msg, input });
    return input;
  }
  return validateFields(
    schema,
    loc,
    (name) => (Object.hasOwn(input, name) ? input[name] : undefined),
    input,
    () => Object.entries(input),
    issues,
  );
}

function validateDict(schema: SchemaNode, input: unknown, loc: Loc, issues: ValidationIssue[]): unknown {
  if (!isPlainObject(input)) {
    issues.push({ type: "dict_type", loc, msg: "Input should be a valid dictionary", input });
    return input;
  }
  const patterned = Object.values(schemaKeyword(schema, "patternProperties") ?? {}).find(isSchemaNode);
  const values = patterned ?? schemaKeyword(schema, "additionalProperties") ?? {};
  const output: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) setOwn(output, key, validate(values, value, [...loc, key], issues));
  return output;
}

function validateList(schema: SchemaNode, input: unknown, loc: Loc, issues: ValidationIssue[]): unknown {
  if (!Array.isArray(input)) {
    issues.push({ type: "list_type", loc, msg: "Input should be a valid list", input });
    return input;
  }
  // pydantic-core stops at the first item past max_length and reports only that.
  const max = numberKeyword(schema, "maxItems");
  if (max !== undefined && input.length > max) {
    const msg = `List should have at most ${max} item${plural(max)} after validation, not ${input.length}`;
    issues.push({ type: "too_long", loc, msg, input, ctx: { field_type: "List", max_length: max, actual_length: input.length } });
    return input;
  }
  const items = schemaKeyword(schema, "items") ?? {};
  const before = issues.length;
  const output = input.map((item: unknown, index) => validate(items, item, [...loc, index], issues));
  const min = numberKeyword(schema, "minItems");
  if (issues.length === before && min !== undefined && output.length < min) {
    const msg = `List should have at least ${min} item${plural(min)} after validation, not ${output.length}`;
    issues.push({ type: "too_short", loc, msg, input, ctx: { field_type: "List", min_length: min, actual_length: output.length } });
  }
  return output;
}

/** Only the unions FastAPI routes use: `X | None`, and `Literal` values (each a `const`). */
function validateUnion(schema: SchemaNode, members: SchemaNode[], input: unknown, loc: Loc, issues: ValidationIssue[]): unknown {
  const present = members.filter((member) => member["type"] !== "null");
  if (present.length < members.length && input === null) return null;
  if (present.length > 0 && present.every((member) => "const" in member)) {
    return record(validateChoice(present.map((member) => member["const"]), input, "literal_error"), input, loc, issues);
  }
  const [only] = present;
  if (present.length !== 1 || only === undefined) throw unsupported(schema);
  return validate(only, input, loc, issues);
}

function validateStringSchema(schema: SchemaNode, input: unknown): Outcome {
  switch (schema["format"]) {
    case "uuid":
      return validateUuid(input);
    case "date-time":
    case "date-or-date-time":
      return validateDateTime(input);
    default:
      return validateString(schema, input);
  }
}

function validate(schema: SchemaNode, input: unknown, loc: Loc, issues: ValidationIssue[]): unknown {
  const members = schemaList(schema, "anyOf");
  if (members !== undefined) return validateUnion(schema, members, input, loc, issues);
  if ("const" in schema) return record(validateChoice([schema["const"]], input, "literal_error"), input, loc, issues);
  const choices = schema["enum"];
  if (Array.isArray(choices)) return record(validateChoice(choices, input, "enum"), input, loc, issues);
  switch (schema["type"]) {
    case "object":
      return schema["patternProperties"] !== undefined || schema["dict"] === true
        ? validateDict(schema, input, loc, issues)
        : validateModel(schema, input, loc, issues);
    case "array":
      return validateList(schema, input, loc, issues);
    case "string":
      return record(validateStringSchema(schema, input), input, loc, issues);
    case "integer":
      return record(validateInteger(schema, input), input, loc, issues);
    case "number":
      return record(validateNumber(schema, input), input, loc, issues);
    case "boolean":
      return record(validateBoolean(input), input, loc, issues);
    case undefined:
      return input;
    default:
      throw unsupported(schema);
  }
}

function isSequence(schema: SchemaNode): boolean {
  const members = schemaList(schema, "anyOf");
  return members === undefined ? schema["type"] === "array" : members.some((member) => member["type"] === "array");
}

function stringValues(raw: unknown): string[] {
  if (typeof raw === "string") return [raw];
  return Array.isArray(raw) ? raw.filter((value): value is string => typeof value === "string") : [];
}

/**
 * Path, query and header parameters, each validated on its own as FastAPI does. A list parameter
 * takes every value; otherwise a query takes the last value (Starlette's multidict) and a header
 * the first. An empty value is a value; only a parameter without any is missing.
 */
function validateParameters(schema: SchemaNode, raw: unknown, part: Exclude<RequestPart, "body">, issues: ValidationIssue[]): unknown {
  const given = new Map<string, string[]>();
  for (const [name, value] of Object.entries(isPlainObject(raw) ? raw : {})) {
    const values = stringValues(value);
    if (values.length > 0) given.set(name, values);
  }
  const { sequences } = fieldsShape(schema);
  // The readers are passed inline: named closures would each cost a `__name` call per request under tsx.
  return validateFields(
    schema,
    [part],
    (name) => {
      const values = given.get(name);
      if (values === undefined || sequences.has(name)) return values;
      return values.at(part === "query" ? -1 : 0);
    },
    null,
    () => [...given].map(([name, values]) => [name, values.length === 1 ? values[0] : values]),
    issues,
  );
}

/**
 * Validates one part of a request. `raw` is, by part: the parsed JSON body (undefined when the
 * body was empty, or a string when its content type was not JSON); the query as every value of
 * every key; the path parameters; the headers with lower-case names.
 */
export function validatePart(schema: TSchema, raw: unknown, part: RequestPart): { value: unknown; issues: ValidationIssue[] } {
  const node: SchemaNode = schema;
  const issues: ValidationIssue[] = [];
  if (part !== "body") return { value: validateParameters(node, raw, part, issues), issues };
  if (raw !== undefined && raw !== null) return { value: validate(node, raw, ["body"], issues), issues };
  // FastAPI itself answers an absent or null body, before pydantic sees it.
  if (OptionalKind in schema || "default" in node) return { value: defaultOf(node), issues };
  return { value: undefined, issues: [missing(["body"], null)] };
}
