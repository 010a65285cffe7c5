import { Type } from "@sinclair/typebox";
import type { AdminDirectory } from "../domain/access/admin-directory.js";
import { defineRoute, type RouteDefinition } from "./route.js";
import { Detail, Nullable, ValidationErrorBody } from "./schemas.js";

const adminErrors = { 401: Detail, 404: Detail, 422: ValidationErrorBody };
const OrgParams = Type.Object({ org_id: Type.String({ format: "uuid" }) });
const KeyParams = Type.Object({ key_id: Type.String({ format: "uuid" }) });
const ListQuery = Type.Object({
  cursor: Type.Optional(Type.String({ maxLength: 512, description: "Opaque URL-safe Base64 cursor from a previous response" })),
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 50 }),
});
const Pagination = Type.Object({ cursor: Nullable(Type.String()) });

const Organization = Type.Object({ id: Type.String(), name: Type.String(), created_at: Type.String({ format: "date-time" }) });
const Project = Type.Object({ id: Type.String(), name: Type.String(), config_version_id: Type.String(), created_at: Type.String({ format: "date-time" }) });
const ApiKey = Type.Object({
  id: Type.String(),
  display: Type.String({ description: "The key's redacted form, `sk_…abcd`; the key itself is never shown again" }),
  created_at: Type.String({ format: "date-time" }),
  last_used_at: Nullable(Type.String({ format: "date-time" })),
  revoked_at: Nullable(Type.String({ format: "date-time" })),
});

/** The admin interface's listings (in creation order, keyset pages) and key rotation. */
export function adminListingRoutes(directory: AdminDirectory): RouteDefinition[] {
  return [
    defineRoute({
      method: "GET",
      url: "/admin/organizations",
      tags: ["admin"],
      summary: "List organizations, oldest first",
      access: "admin",
      query: ListQuery,
      responses: { 200: Type.Object({ organizations: Type.Array(Organization), pagination: Pagination }), ...adminErrors },
      handler: async ({ query }) => {
        const { items, cursor } = await directory.listOrganizations(query.cursor, query.limit);
        return { organizations: items, pagination: { cursor } };
      },
    }),
    defineRoute({
      method: "GET",
      url: "/admin/organizations/:org_id/projects",
      tags: ["admin"],
      summary: "List an organization's projects, oldest first",
      access: "admin",
      params: OrgParams,
      query: ListQuery,
      responses: { 200: Type.Object({ projects: Type.Array(Project), pagination: Pagination }), ...adminErrors },
      handler: async ({ params, query }) => {
        const { items, cursor } = await directory.listProjects(params.org_id, query.cursor, query.limit);
        return { projects: items, pagination: { cursor } };
      },
    }),
    defineRoute({
      method: "GET",
      url: "/admin/organizations/:org_id/api-keys",
      tags: ["admin"],
      summary: "List an organization's API keys (redacted), with when each was created, last used and revoked",
      access: "admin",
      params: OrgParams,
      query: ListQuery,
      responses: { 200: Type.Object({ api_keys: Type.Array(ApiKey), pagination: Pagination }), ...adminErrors },
      handler: async ({ params, query }) => {
        const { items, cursor } = await directory.listApiKeys(params.org_id, query.cursor, query.limit);
        return { api_keys: items, pagination: { cursor } };
      },
    }),
    defineRoute({
      method: "POST",
      url: "/admin/api-keys/:key_id/rotate",
      tags: ["admin"],
      summary: "Replace an API key: a new key of the same organization (shown once), the old one revoked at once",
      access: "admin",
      params: KeyParams,
      responses: { 201: Type.Object({ id: Type.String(), api_key: Type.String(), replaced_key_id: Type.String() }), 409: Detail, ...adminErrors },
      handler: async ({ params }) => directory.rotateApiKey(params.key_id),
    }),
  ];
}
