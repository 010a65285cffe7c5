import { Type, type Static } from "@sinclair/typebox";
import { parsePhoneNumberFromString } from "libphonenumber-js/max";
import { RequestValidationError } from "../shared/errors.js";
import { checkJsonSchema } from "../shared/json-schema.js";
import type { ValidationIssue } from "../shared/validation-issue.js";

/** One tool as an admin writes it under `agent.tools`; what each `type` requires is checked by `checkToolDefinitions`. */
export const ToolDefinitionInput = Type.Object({
  name: Type.String({ pattern: "^[A-Za-z0-9_-]{1,64}$" }),
  type: Type.Optional(Type.Union([Type.Literal("http"), Type.Literal("end_call"), Type.Literal("transfer_call")])),
  description: Type.Optional(Type.String({ maxLength: 4000 })),
  parameters: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { dict: true })),
  url: Type.Optional(Type.String({ maxLength: 2000 })),
  timeout_ms: Type.Optional(Type.Integer({ minimum: 100, maximum: 60_000 })),
  speak_during_execution: Type.Optional(Type.String({ maxLength: 1000 })),
  number: Type.Optional(Type.String({ maxLength: 32 })),
});
export type ToolDefinitionInput = Static<typeof ToolDefinitionInput>;

export const MAX_TOOLS = 32;
export const DEFAULT_TOOL_TIMEOUT_MS = 10_000;
export const MIN_TOOL_SECRET_LENGTH = 16;

const EMPTY_PARAMETERS: Record<string, unknown> = { type: "object", properties: {} };

interface ToolBase {
  name: string;
  description: string;
  /** A JSON Schema of type object: what the model must pass. */
  parameters: Record<string, unknown>;
  /** Spoken in a call while the tool runs; "" when nothing is. */
  speak_during_execution: string;
}

export interface HttpTool extends ToolBase {
  type: "http";
  url: string;
  timeout_ms: number;
}

export interface EndCallTool extends ToolBase {
  type: "end_call";
}

export interface TransferCallTool extends ToolBase {
  type: "transfer_call";
  /** E.164. */
  number: string;
}

export type ToolDefinition = HttpTool | EndCallTool | TransferCallTool;

/** The stored form of a tool: its type and parameters made explicit, its description defaulted. */
export function normalizeTool(input: ToolDefinitionInput): ToolDefinition {
  const base: ToolBase = {
    name: input.name,
    description: input.description ?? defaultDescription(input),
    parameters: input.parameters ?? EMPTY_PARAMETERS,
    speak_during_execution: input.speak_during_execution ?? "",
  };
  switch (input.type ?? "http") {
    case "http":
      return { ...base, type: "http", url: input.url ?? "", timeout_ms: input.timeout_ms ?? DEFAULT_TOOL_TIMEOUT_MS };
    case "end_call":
      return { ...base, type: "end_call" };
    case "transfer_call":
      return { ...base, type: "transfer_call", number: e164(input.number ?? "") ?? "" };
  }
}

function defaultDescription(input: ToolDefinitionInput): string {
  if (input.type === "end_call") return "Ends the call once you have said goodbye.";
  if (input.type === "transfer_call") return "Transfers the caller to a person.";
  return "";
}

function e164(number: string): string | undefined {
  const parsed = parsePhoneNumberFromString(number.startsWith("+") ? number : `+${number}`);
  return parsed?.isValid() ? parsed.number : undefined;
}

/**
 * The rules of `agent.tools` a schema cannot state, each reported at its place under
 * `["body","config","agent","tools",i,…]`: unique names, an absolute http(s) `url` for an http tool, a valid JSON
 * Schema of an object as `parameters`, a phone number to transfer to; and a `tool_secret` to sign http calls with,
 * given now or kept from the current version (`secretKept`).
 */
export function checkToolDefinitions(
  agent: { tools?: ToolDefinitionInput[] | undefined; tool_secret?: string | undefined } | undefined,
  secretKept: boolean,
): void {
  const tools = agent?.tools ?? [];
  const issues: ValidationIssue[] = [];
  const at = (index: number, field: string) => ["body", "config", "agent", "tools", index, field];
  const seen = new Set<string>();
  for (const [index, tool] of tools.entries()) {
    if (seen.has(tool.name)) issues.push(valueIssue(at(index, "name"), `tool name '${tool.name}' is used by an earlier tool`, tool.name));
    seen.add(tool.name);
    if (tool.parameters !== undefined) {
      const problem = tool.parameters["type"] !== "object" ? "must be a JSON Schema with \"type\": \"object\"" : checkJsonSchema(tool.parameters);
      if (problem) issues.push(valueIssue(at(index, "parameters"), problem.startsWith("must") ? problem : `not a valid JSON Schema: ${problem}`, tool.parameters));
    }
    const type = tool.type ?? "http";
    if (type === "http") {
      if (tool.url === undefined) issues.push(missingIssue(at(index, "url"), tool));
      else if (!isAbsoluteHttpUrl(tool.url)) issues.push(valueIssue(at(index, "url"), "must be an absolute http or https URL", tool.url));
    }
    if (type === "transfer_call") {
      if (tool.number === undefined) issues.push(missingIssue(at(index, "number"), tool));
      else if (e164(tool.number) === undefined) issues.push(valueIssue(at(index, "number"), "not a valid phone number (E.164, e.g. +14155550199)", tool.number));
    }
  }
  if (agent?.tool_secret === undefined && !secretKept && tools.some((tool) => (tool.type ?? "http") === "http")) {
    issues.push(valueIssue(["body", "config", "agent", "tool_secret"], "required when an http tool is configured (16+ characters)", null));
  }
  if (issues.length > 0) throw new RequestValidationError(issues);
}

function isAbsoluteHttpUrl(url: string): boolean {
  if (!URL.canParse(url)) return false;
  const parsed = new URL(url);
  return (parsed.protocol === "http:" || parsed.protocol === "https:") && parsed.hostname !== "";
}

function valueIssue(loc: ValidationIssue["loc"], message: string, input: unknown): ValidationIssue {
  return { type: "value_error", loc, msg: `Value error, ${message}`, input, ctx: { error: {} } };
}

function missingIssue(loc: ValidationIssue["loc"], input: unknown): ValidationIssue {
  return { type: "missing", loc, msg: "Field required", input };
}
