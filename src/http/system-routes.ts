import { Type } from "@sinclair/typebox";
import { UnavailableError } from "../domain/shared/errors.js";
import type { Db } from "../domain/shared/database.js";
import type { EngineStatus } from "../providers/speech/engines.js";
import type { HttpMetrics } from "./metrics.js";
import { defineRoute, type RouteDefinition } from "./route.js";
import { Detail } from "./schemas.js";

const Status = Type.Object({ status: Type.String() });
const SpeechEngineStatus = Type.Object({ engine: Type.String(), ok: Type.Boolean(), detail: Type.Optional(Type.String()) });
const Readiness = Type.Object({ status: Type.String(), speech: Type.Optional(Type.Array(SpeechEngineStatus)) });

export function systemRoutes(db: Db, metrics: HttpMetrics, speechStatus?: () => Promise<EngineStatus[]>): RouteDefinition[] {
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
      summary: "Readiness: the database answers; the offline speech engines are listed, a missing one as degraded",
      access: "public",
      responses: { 200: Readiness, 503: Detail },
      handler: async () => {
        try {
          await db.ping();
        } catch {
          throw new UnavailableError("Database unavailable");
        }
        const speech = (await speechStatus?.()) ?? [];
        if (speech.length === 0) return { status: "ok" };
        return { status: speech.every((engine) => engine.ok) ? "ok" : "degraded", speech };
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
