import { Type } from "@sinclair/typebox";
import type { OrganizationService } from "../domain/organizations/organization-service.js";
import { ProjectConfigInput } from "../domain/projects/project-config.js";
import type { ProjectService } from "../domain/projects/project-service.js";
import { NotFoundError } from "../domain/shared/errors.js";
import { defineRoute, type RouteDefinition } from "./route.js";
import { Detail, ValidationErrorBody } from "./schemas.js";

const adminErrors = { 401: Detail, 404: Detail, 422: ValidationErrorBody };
const Name = Type.String({ minLength: 1, maxLength: 200 });
const OrgParams = Type.Object({ org_id: Type.String({ format: "uuid" }) });
const ProjectParams = Type.Object({ project_id: Type.String({ format: "uuid" }) });
const VersionParams = Type.Object({ project_id: Type.String({ format: "uuid" }), version_id: Type.String({ format: "uuid" }) });
const KeyParams = Type.Object({ key_id: Type.String({ format: "uuid" }) });

export function adminRoutes(organizations: OrganizationService, projects: ProjectService): RouteDefinition[] {
  return [
    defineRoute({
      method: "POST",
      url: "/admin/organizations",
      tags: ["admin"],
      summary: "Create an organization with its first API key (shown once)",
      access: "admin",
      body: Type.Object({ name: Name }),
      responses: { 201: Type.Object({ id: Type.String(), name: Type.String(), api_key: Type.String() }), ...adminErrors },
      handler: async ({ body }) => organizations.create(body.name),
    }),
    defineRoute({
      method: "POST",
      url: "/admin/organizations/:org_id/api-keys",
      tags: ["admin"],
      summary: "Create another API key for an organization (shown once)",
      access: "admin",
      params: OrgParams,
      responses: { 201: Type.Object({ id: Type.String(), api_key: Type.String() }), ...adminErrors },
      handler: async ({ params }) => organizations.createApiKey(params.org_id),
    }),
    defineRoute({
      method: "DELETE",
      url: "/admin/api-keys/:key_id",
      tags: ["admin"],
      summary: "Revoke an API key at once",
      access: "admin",
      params: KeyParams,
      responses: { 204: Type.Null(), ...adminErrors },
      handler: async ({ params }) => organizations.revokeApiKey(params.key_id),
    }),
    defineRoute({
      method: "POST",
      url: "/admin/organizations/:org_id/projects",
      tags: ["admin"],
      summary: "Create a project with its first configuration version",
      access: "admin",
      params: OrgParams,
      body: Type.Object({ name: Name, config: ProjectConfigInput }),
      responses: {
        201: Type.Object({ id: Type.String(), name: Type.String(), config_version_id: Type.String() }),
        409: Detail,
        ...adminErrors,
      },
      handler: async ({ params, body }) => {
        if (!(await organizations.exists(params.org_id))) throw new NotFoundError("Organization not found");
        return projects.create(params.org_id, body.name, body.config);
      },
    }),
    defineRoute({
      method: "PUT",
      url: "/admin/projects/:project_id/config",
      tags: ["admin"],
      summary: "Publish a new immutable configuration version, which becomes the default",
      access: "admin",
      params: ProjectParams,
      body: Type.Object({ config: ProjectConfigInput }),
      responses: { 201: Type.Object({ config_version_id: Type.String() }), ...adminErrors },
      handler: async ({ params, body }) => projects.publish(params.project_id, body.config),
    }),
    defineRoute({
      method: "GET",
      url: "/admin/projects/:project_id",
      tags: ["admin"],
      summary: "Show a project with its current configuration (secrets never returned) and version ids",
      access: "admin",
      params: ProjectParams,
      responses: { 200: Type.Unknown(), ...adminErrors },
      handler: async ({ params }) => projects.view(params.project_id),
    }),
    defineRoute({
      method: "GET",
      url: "/admin/projects/:project_id/versions/:version_id/config",
      tags: ["admin"],
      summary: "Show one configuration version of a project (secrets never returned), to compare versions or publish an earlier one again",
      access: "admin",
      params: VersionParams,
      responses: {
        200: Type.Object({
          id: Type.String(),
          project_id: Type.String(),
          version: Type.Integer({ description: "1 for the first version, then one more for each publish" }),
          created_at: Type.String({ format: "date-time" }),
          current: Type.Boolean({ description: "Whether this version is the project's default" }),
          config: Type.Record(Type.String(), Type.Unknown(), { description: "The configuration as published, defaults filled in; each credential only as `…_set`" }),
        }),
        ...adminErrors,
      },
      handler: async ({ params }) => projects.viewVersion(params.project_id, params.version_id),
    }),
  ];
}
