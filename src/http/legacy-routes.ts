import { Type } from "@sinclair/typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { ChatService, TurnRequest } from "../domain/chat/chat-service.js";
import type { Caller } from "../domain/access/credentials.js";
import { legacyConversations } from "../domain/history/legacy-history.js";
import type { SummaryService } from "../domain/chat/summaries.js";
import type { ThreadService } from "../domain/threads/thread-service.js";
import type { MessagesStore } from "../store/messages-store.js";
import { ChatStream } from "./chat-stream.js";
import { defineRoute, type RouteDefinition } from "./route.js";
import { Detail, ThreadIdParams, withErrors } from "./schemas.js";

export interface LegacyDependencies {
  basePath: string;
  chat: ChatService;
  threads: ThreadService;
  messages: MessagesStore;
  summaries: SummaryService;
}

const tags = ["legacy"];
const ThreadId = Type.String({ maxLength: 200 });
const ServiceModeName = Type.String({ maxLength: 200 });
const LegacyReply = Type.Object({ message: Type.String() });

/** Legacy chat and follow-up share one shape: `{message}`, or NDJSON tokens then `{message}` when streaming. */
async function respond(
  deps: LegacyDependencies,
  turn: TurnRequest,
  streaming: boolean,
  request: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  if (!streaming) return reply.send({ message: (await deps.chat.turn(turn)).message });
  const stream = new ChatStream(reply, false);
  try {
    stream.finish({ message: (await deps.chat.turn({ ...turn, onToken: (token) => stream.token(token) })).message });
  } catch (error) {
    if (!stream.hasStarted) throw error;
    request.log.warn({ err: error }, "streamed legacy reply failed after its first token");
    stream.fail(error);
  }
  return reply;
}

/** A legacy chat or follow-up as a turn of the shared chat service. */
function legacyTurn(
  caller: Caller,
  body: { thread_id: string; service_mode_name: string; start_new_conversation: boolean },
  task: TurnRequest["task"],
  userMessage?: TurnRequest["userMessage"],
): TurnRequest {
  return {
    organizationId: caller.organizationId,
    threadId: body.thread_id,
    projectName: body.service_mode_name,
    startNewConversation: body.start_new_conversation,
    ...(userMessage ? { userMessage } : {}),
    task,
  };
}

export function legacyRoutes(deps: LegacyDependencies): RouteDefinition[] {
  const base = deps.basePath;
  return [
    defineRoute({
      method: "POST",
      url: `${base}/chat`,
      tags,
      summary: "Earlier generation: send a message and get the AI reply",
      access: { thread: ({ body }) => body.thread_id },
      body: Type.Object({
        thread_id: ThreadId,
        message: Type.String({ minLength: 1, maxLength: 32_000 }),
        streaming: Type.Boolean({ default: false }),
        service_mode_name: ServiceModeName,
        start_new_conversation: Type.Boolean({ default: false }),
      }),
      responses: withErrors({ 200: LegacyReply }, [404, 502, 504]),
      raw: true,
      handler: async ({ caller, body, request, reply }) => {
        const turn = legacyTurn(caller, body, "reply", { content: body.message, extras: { user_type: "user" } });
        return respond(deps, turn, body.streaming, request, reply);
      },
    }),
    defineRoute({
      method: "POST",
      url: `${base}/create_thread`,
      tags,
      summary: "Earlier generation: create a thread",
      access: "apiKey",
      responses: withErrors({ 200: Type.Object({ thread_id: Type.String() }) }),
      handler: async ({ caller }) => deps.threads.create(caller.organizationId, { type: "NORMAL", timezone: "UTC" }),
    }),
    defineRoute({
      method: "POST",
      url: `${base}/retrieve_conversations`,
      tags,
      summary: "Earlier generation: the thread's messages, chronological, page by page",
      access: { thread: ({ query }) => query.thread_id },
      query: Type.Object({
        thread_id: ThreadId,
        page: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 }),
        limit: Type.Integer({ minimum: 1, maximum: 100, default: 25 }),
      }),
      responses: withErrors(
        {
          200: Type.Object({
            messages: Type.Array(
              Type.Object({
                message_id: Type.String(),
                role: Type.Union([Type.Literal("user"), Type.Literal("AI")]),
                message: Type.String(),
                conversation_id: Type.String(),
              }),
            ),
            pagination: Type.Object({ current_page: Type.Integer(), total_pages: Type.Integer(), total_items: Type.Integer() }),
          }),
        },
        [404],
      ),
      handler: async ({ caller, query }) => legacyConversations(deps.threads, deps.messages, caller.organizationId, query.thread_id, query.page, query.limit),
    }),
    defineRoute({
      method: "POST",
      url: `${base}/end_conversation`,
      tags,
      summary: "Earlier generation: end the active conversation; the next message opens a new one",
      access: "apiKey",
      body: Type.Object({ thread_id: ThreadId }),
      responses: withErrors({ 200: Type.Object({ message: Type.String() }), 400: Detail }),
      handler: async ({ caller, body }) => {
        const ended = await deps.chat.endConversation(caller.organizationId, body.thread_id);
        return { message: `Conversation ${ended} ended; the next message starts a new conversation` };
      },
    }),
    defineRoute({
      method: "POST",
      url: `${base}/get_followup`,
      tags,
      summary: "Earlier generation: a proactive AI message from the project's follow-up instructions",
      access: { thread: ({ body }) => body.thread_id },
      body: Type.Object({
        thread_id: ThreadId,
        streaming: Type.Boolean({ default: false }),
        service_mode_name: ServiceModeName,
        start_new_conversation: Type.Boolean({ default: false }),
      }),
      responses: withErrors({ 200: LegacyReply }, [404, 502, 504]),
      raw: true,
      handler: async ({ caller, body, request, reply }) => {
        return respond(deps, legacyTurn(caller, body, "followup"), body.streaming, request, reply);
      },
    }),
    defineRoute({
      method: "POST",
      url: `${base}/retrieve_conversation_summary`,
      tags,
      summary: "Earlier generation: a summary of the thread's latest conversation",
      description: "On failure the HTTP status is `status_code` and the body `{error, status_code}`.",
      access: "apiKey",
      body: Type.Object({ thread_id: ThreadId }),
      responses: withErrors({
        200: Type.Object({ conversation_summary: Type.String() }),
        404: Type.Object({ error: Type.String(), status_code: Type.Integer() }),
        502: Type.Object({ error: Type.String(), status_code: Type.Integer() }),
      }),
      errorShape: "legacy-error",
      handler: async ({ caller, body }) => ({ conversation_summary: await deps.summaries.latestConversation(caller.organizationId, body.thread_id) }),
    }),
    defineRoute({
      method: "POST",
      url: `${base}/generate-token/:thread_id`,
      tags,
      summary: "Earlier generation: a thread token, as POST /threads/{thread_id}/token",
      access: "apiKey",
      params: ThreadIdParams,
      responses: withErrors({ 200: Type.Object({ access_token: Type.String() }) }, [404]),
      handler: async ({ caller, params }) => deps.threads.issueToken(caller.organizationId, params.thread_id),
    }),
  ];
}
