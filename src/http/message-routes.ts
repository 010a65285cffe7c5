import { Type } from "@sinclair/typebox";
import { latestPageQuery, type HistoryService } from "../domain/history/history-service.js";
import { defineRoute, type RouteDefinition } from "./route.js";
import { Nullable, ThreadIdParams, withErrors } from "./schemas.js";

const ContextMessage = Type.Object({
  message_id: Type.String(),
  role: Type.String(),
  message: Type.String(),
  conversation_id: Type.Integer(),
  timestamp: Type.Integer({ description: "Unix milliseconds" }),
  conversation_end_time: Nullable(Type.String()),
});
const Message = Type.Object({
  message_id: Type.String(),
  role: Type.String(),
  message: Type.String(),
  conversation_id: Type.Integer(),
  timestamp: Type.Integer({ description: "Unix milliseconds" }),
  extras: Type.Record(Type.String(), Type.Unknown()),
  conversation_end_time: Nullable(Type.String()),
});
const Pagination = Type.Object({ cursor: Nullable(Type.String()) });
const jsonContentType = "application/json; charset=utf-8";
const Cursor = Type.String({ maxLength: 512, description: "Opaque URL-safe Base64 cursor from a previous response" });

export function messageRoutes(history: HistoryService): RouteDefinition[] {
  return [
    defineRoute({
      method: "GET",
      url: "/threads/:thread_id/messages",
      tags: ["messages"],
      summary: "A page of the thread's messages (keyset cursor pagination, chronological within the page)",
      access: { thread: ({ params }) => params.thread_id },
      params: ThreadIdParams,
      query: Type.Object({
        cursor: Type.Optional(Cursor),
        newer: Type.Boolean({ default: latestPageQuery.newer, description: "false: messages older than the cursor; true: newer" }),
        limit: Type.Integer({ minimum: 1, maximum: 100, default: latestPageQuery.limit }),
      }),
      responses: withErrors({ 200: Type.Object({ messages: Type.Array(Message), pagination: Pagination, is_locked: Type.Boolean() }) }, [404]),
      // Served as rendered bytes, from the page cache when it holds them (sent as they are: no serializing, measuring or
      // encoding per request). The page's objects hold exactly the schema's fields in its order, so JSON.stringify
      // writes what the schema's serializer would.
      raw: true,
      // The latest page, when this instance holds both the caller's API key and the rendered page: no database read.
      // Anything else (a query, a thread token, a key or page not in memory) comes to the handler, which fills the caches.
      fromMemory: { contentType: jsonContentType, answer: ({ caller, params }) => history.rememberedLatestPage(caller.organizationId, params.thread_id) },
      handler: async ({ caller, params, query, reply }) =>
        reply.type(jsonContentType).send(await history.renderedPage(caller.organizationId, params.thread_id, query, (page) => Buffer.from(JSON.stringify(page)))),
    }),
    defineRoute({
      method: "GET",
      url: "/threads/:thread_id/messages/search",
      tags: ["messages"],
      summary: "Messages containing a text (case-insensitive), newest first, with context around each match",
      access: { thread: ({ params }) => params.thread_id },
      params: ThreadIdParams,
      query: Type.Object({
        query: Type.String({ minLength: 1, maxLength: 500 }),
        cursor: Type.Optional(Cursor),
        limit: Type.Integer({ minimum: 1, maximum: 50, default: 10 }),
        context: Type.Integer({ minimum: 0, maximum: 10, default: 2 }),
      }),
      responses: withErrors(
        {
          200: Type.Object({
            matches: Type.Array(
              Type.Object({
                message_id: Type.String(),
                prev_cursor: Nullable(Type.String()),
                next_cursor: Nullable(Type.String()),
                context: Type.Array(ContextMessage),
              }),
            ),
            pagination: Pagination,
          }),
        },
        [404],
      ),
      handler: async ({ caller, params, query }) => history.search(caller.organizationId, params.thread_id, query),
    }),
  ];
}
