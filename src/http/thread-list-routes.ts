import { Type } from "@sinclair/typebox";
import type { ThreadListing } from "../domain/threads/thread-listing.js";
import { defineRoute, type RouteDefinition } from "./route.js";
import { Nullable, withErrors } from "./schemas.js";

const ThreadListItem = Type.Object({
  id: Type.String(),
  alias: Nullable(Type.String()),
  timezone: Type.String(),
  type: Type.String({ description: "NORMAL or SIMULATION" }),
  project_name: Nullable(Type.String({ description: "The thread's default project" })),
  created_at: Type.String({ description: "ISO 8601" }),
  usage: Type.Object({
    billable_messages: Type.Number(),
    billable_message_cost: Type.Number(),
    voice_minutes: Type.Number(),
    voice_cost: Type.Number(),
    total_cost: Type.Number(),
  }),
  first_user_message: Nullable(Type.String({ description: "The start of the thread's first user message (200 characters at most); null before one" })),
  last_activity_at: Type.String({ description: "ISO 8601: the newest of the thread's creation, its newest message and its newest call" }),
  message_count: Type.Integer({ description: "Messages stored in the thread, spoken ones included" }),
  call_count: Type.Integer({ description: "Calls placed or received on the thread" }),
});

/** `GET /threads`: an addition to the interface, for the console (decisions.md, "Console and client SDK"). */
export function threadListRoutes(listing: ThreadListing): RouteDefinition[] {
  return [
    defineRoute({
      method: "GET",
      url: "/threads",
      tags: ["threads"],
      summary: "The organization's threads, newest first (keyset cursor pagination)",
      access: "apiKey",
      query: Type.Object({
        project_name: Type.Optional(Type.String({ maxLength: 200, description: "Threads whose default project, or one of whose conversations' project, has this name" })),
        type: Type.Optional(Type.Union([Type.Literal("NORMAL"), Type.Literal("SIMULATION")])),
        cursor: Type.Optional(Type.String({ maxLength: 512, description: "Opaque URL-safe Base64 cursor from a previous response" })),
        limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
      }),
      responses: withErrors({ 200: Type.Object({ threads: Type.Array(ThreadListItem), pagination: Type.Object({ cursor: Nullable(Type.String()) }) }) }),
      handler: async ({ caller, query }) =>
        listing.list(caller.organizationId, {
          ...(query.type !== undefined ? { type: query.type } : {}),
          ...(query.project_name !== undefined ? { projectName: query.project_name } : {}),
          ...(query.cursor !== undefined ? { cursor: query.cursor } : {}),
          limit: query.limit,
        }),
    }),
  ];
}
