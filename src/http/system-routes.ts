import { Type } from "@sinclair/typebox";
import { UnavailableError } from "../domain/shared/errors.js";
import type { Db } from "../domain/shared/database.js";
import type { HttpMetrics } from "./metrics.js";
import { defineRoute, type RouteDefinition } from "./route.js";
import { Detail } from "./schemas.js";

const Status = Type.Object({ status: Type.String() });

export function systemRoutes(db: Db, metrics: HttpMetrics): RouteDefinition[] {
  return [
    defineRoute({
      method: "GET",
      url: "/healthz",
      tags: ["system"],
      summary: "Liveness: the process answers",
      access: "public",
      responses: { 200: Status },
      handler: async () => ({ status: "ok" }),
    }),
    defineRoute({
      method: "GET",
      url: "/readyz",
      tags: ["system"],
      summary: "Readiness: the database answers",
      access: "public",
      responses: { 200: Status, 503: Detail },
      handler: async () => {
        try {
          await db.ping();
        } catch {
          throw new UnavailableError("Database unavailable");
        }
        return { status: "ok" };
      },
    }),
    defineRoute({
      method: "GET",
      url: "/metrics",
      tags: ["system"],
      summary: "Prometheus metrics",
      access: "public",
      responses: { 200: Type.String() },
      raw: true,
      handler: async ({ reply }) => reply.type(metrics.contentType).send(await metrics.render()),
    }),
  ];
}
