import { Type } from "@sinclair/typebox";
import type { Authenticator } from "../domain/access/credentials.js";
import { latestPageQuery, type HistoryService } from "../domain/history/history-service.js";
import { threadScopeAllows } from "./thread-scope.js";
import { defineRoute, type MemoryAnswer, type RouteDefinition } from "./route.js";
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
const latestPageRoute = "/threads/:thread_id/messages";
/** The route's URL without a query, for thread ids that need no percent-decoding (Parley's own ids). */
const latestPageUrl = /^\/threads\/([\w-]{1,100})\/messages$/;
const Cursor = Type.String({ maxLength: 512, description: "Opaque URL-safe Base64 cursor from a previous response" });

export function messageRoutes(history: HistoryService): RouteDefinition[] {
  return [
    defineRoute({
      method: "GET",
      url: latestPageRoute,
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

/**
 * The latest page of a thread, answered before the request is routed when this instance holds both the caller's API
 * key and the rendered page: what the route would answer, with no database read and none of the route's machinery.
 * Anything else (a query, a thread token, a key or page not in memory) goes through the route, which fills the caches.
 */
export function latestPageFromMemory(history: HistoryService, authenticator: Authenticator): MemoryAnswer {
  return (method, url, authorization) => {
    if (method !== "GET" || authorization === undefined) return undefined;
    const threadId = latestPageUrl.exec(url)?.[1];
    if (threadId === undefined) return undefined;
    const caller = authenticator.rememberedCaller(authorization);
    const body = caller && threadScopeAllows(caller, threadId) ? history.rememberedLatestPage(caller.organizationId, threadId) : undefined;
    return body ? { route: latestPageRoute, contentType: jsonContentType, body } : undefined;
  };
}
