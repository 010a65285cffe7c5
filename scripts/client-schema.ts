import openapiTS, { astToString } from "openapi-typescript";

/** Where the typed client keeps the types generated from the server's OpenAPI document. */
export const clientSchemaPath = new URL("../packages/client/src/openapi.ts", import.meta.url);

/** The TypeScript source of the client's schema types, generated from an OpenAPI document by openapi-typescript. */
export async function clientSchemaSource(document: object): Promise<string> {
  const nodes = await openapiTS(document as Parameters<typeof openapiTS>[0], { alphabetize: true });
  return `// Generated from GET /openapi.json by \`npm run client:schema\`; a test fails when it is out of date.\n\n${astToString(nodes)}`;
}
