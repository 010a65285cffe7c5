import { Type } from "@sinclair/typebox";
import type { ThreadService } from "../domain/threads/thread-service.js";
import { defineRoute, type RouteDefinition } from "./route.js";
import { Nullable, ThreadIdParams, withErrors } from "./schemas.js";

const Usage = Type.Object({
  billable_messages: Type.Number(),
  billable_message_cost: Type.Number(),
  voice_minutes: Type.Number(),
  voice_cost: Type.Number(),
  total_cost: Type.Number(),
});

const ThreadBody = Type.Object({ id: Type.String(), alias: Nullable(Type.String()), timezone: Type.String(), usage: Usage });
const Alias = Type.String({ minLength: 1, maxLength: 200, description: "Unique in the organization" });

export function threadRoutes(threads: ThreadService): RouteDefinition[] {
  return [
    defineRoute({
      method: "POST",
      url: "/threads",
      tags: ["threads"],
      summary: "Create a thread",
      access: "apiKey",
      body: Type.Object({
        type: Type.Union([Type.Literal("NORMAL"), Type.Literal("SIMULATION")], { default: "NORMAL" }),
        timezone: Type.String({ default: "UTC", maxLength: 64, description: "IANA timezone name" }),
        project_name: Type.Optional(Type.String({ maxLength: 200, description: "Default project of the thread" })),
        json_input: Type.Optional(Type.String({ maxLength: 1_000_000, description: "A JSON object, as a string, merged into the thread's context" })),
        alias: Type.Optional(Alias),
      }),
      responses: withErrors({ 200: Type.Object({ thread_id: Type.String() }) }, [404, 409]),
      handler: async ({ caller, body }) => threads.create(caller.organizationId, body),
    }),
    defineRoute({
      method: "GET",
      url: "/threads/:thread_id",
      tags: ["threads"],
      summary: "Thread details and usage",
      access: { thread: ({ params }) => params.thread_id },
      params: ThreadIdParams,
      responses: withErrors({ 200: ThreadBody }, [404]),
      handler: async ({ caller, params }) => {
        return threads.view(caller.organizationId, params.thread_id);
      },
    }),
    defineRoute({
      method: "GET",
      url: "/threads/by-alias/:alias",
      tags: ["threads"],
      summary: "Thread details and usage, found by the thread's alias",
      access: "apiKey",
      params: Type.Object({ alias: Alias }),
      responses: withErrors({ 200: ThreadBody }, [404]),
      handler: async ({ caller, params }) => threads.viewByAlias(caller.organizationId, params.alias),
    }),
    defineRoute({
      method: "PATCH",
      url: "/threads/:thread_id",
      tags: ["threads"],
      summary: "Set or clear (null) the thread's alias",
      access: "apiKey",
      params: ThreadIdParams,
      body: Type.Object({ alias: Nullable(Alias) }),
      responses: withErrors({ 200: ThreadBody }, [404, 409]),
      handler: async ({ caller, params, body }) => threads.setAlias(caller.organizationId, params.thread_id, body.alias),
    }),
    defineRoute({
      method: "POST",
      url: "/threads/:thread_id/token",
      tags: ["threads"],
      summary: "Issue a short-lived JWT scoped to the thread",
      access: "apiKey",
      params: ThreadIdParams,
      responses: withErrors({ 200: Type.Object({ access_token: Type.String() }) }, [404]),
      handler: async ({ caller, params }) => threads.issueToken(caller.organizationId, params.thread_id),
    }),
    defineRoute({
      method: "POST",
      url: "/threads/:thread_id/json-input",
      tags: ["threads"],
      summary: "Merge JSON input into the thread's context",
      access: "apiKey",
      params: ThreadIdParams,
      body: Type.Object({
        project_name: Type.String({ maxLength: 200 }),
        json_input: Type.String({ maxLength: 1_000_000 }),
      }),
      responses: withErrors({ 200: Type.Object({ response: Type.String() }) }, [404]),
      handler: async ({ caller, params, body }) => threads.receiveJsonInput(caller.organizationId, params.thread_id, body.project_name, body.json_input),
    }),
  ];
}
