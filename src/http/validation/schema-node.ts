/** A JSON Schema object as TypeBox builds it, read through `unknown` rather than TypeBox's `any` members. */
export type SchemaNode = Readonly<Record<string, unknown>>;

export function isSchemaNode(value: unknown): value is SchemaNode {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function numberKeyword(schema: SchemaNode, key: string): number | undefined {
  const value = schema[key];
  return typeof value === "number" ? value : undefined;
}

export function stringKeyword(schema: SchemaNode, key: string): string | undefined {
  const value = schema[key];
  return typeof value === "string" ? value : undefined;
}

export function schemaKeyword(schema: SchemaNode, key: string): SchemaNode | undefined {
  const value = schema[key];
  return isSchemaNode(value) ? value : undefined;
}

export function schemaList(schema: SchemaNode, key: string): SchemaNode[] | undefined {
  const value = schema[key];
  return Array.isArray(value) ? value.filter(isSchemaNode) : undefined;
}

/** `properties` in declaration order, which is also the order pydantic reports errors in. */
export function schemaProperties(schema: SchemaNode): [string, SchemaNode][] {
  const properties = schemaKeyword(schema, "properties") ?? {};
  return Object.entries(properties).filter((entry): entry is [string, SchemaNode] => isSchemaNode(entry[1]));
}

export function requiredNames(schema: SchemaNode): Set<string> {
  const required = schema["required"];
  return new Set(Array.isArray(required) ? required.filter((name): name is string => typeof name === "string") : []);
}
