import { Type } from "@sinclair/typebox";
import type { ChatService, TurnResult } from "../domain/chat/chat-service.js";
import { NotImplementedError } from "../domain/shared/errors.js";
import { ChatStream, wantsEventStream } from "./chat-stream.js";
import { defineRoute, type RouteDefinition } from "./route.js";
import { withErrors } from "./schemas.js";

const Simulate = Type.Object({
  initial_messages: Type.Optional(Type.Array(Type.String({ maxLength: 32_000 }), { maxItems: 100 })),
  max_turns: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  agent_type: Type.Optional(Type.String({ maxLength: 200 })),
  industry: Type.Optional(Type.String({ maxLength: 200 })),
  behavioural_prompt: Type.Optional(Type.String({ maxLength: 10_000 })),
  topic: Type.Optional(Type.String({ maxLength: 1000 })),
  create: Type.Boolean({ default: false }),
  evaluate: Type.Boolean({ default: false }),
});

export const ChatResponse = Type.Object({
  message: Type.String(),
  extras: Type.Object({ user_message_id: Type.String(), conversation_id: Type.Integer(), reply_message_id: Type.String() }),
});

export function chatResponse(result: TurnResult) {
  return {
    message: result.message,
    extras: { user_message_id: result.userMessageId ?? "", conversation_id: result.conversationId, reply_message_id: result.replyMessageId },
  };
}

export function chatRoutes(chat: ChatService): RouteDefinition[] {
  return [
    defineRoute({
      method: "POST",
      url: "/chat",
      tags: ["chat"],
      summary: "Send a user message to a thread and get the AI reply, whole or streamed",
      description:
        "With `streaming: true` the reply is NDJSON: `{\"token\",\"index\"}` lines, then the complete chat response; " +
        "with `Accept: text/event-stream` the same as server-sent events (`token`, `message`, `error`).",
      access: { thread: ({ body }) => body.thread_id },
      body: Type.Object({
        thread_id: Type.String({ maxLength: 200 }),
        message: Type.String({ minLength: 1, maxLength: 32_000 }),
        service_config_name: Type.String({ maxLength: 200 }),
        streaming: Type.Boolean({ default: false }),
        config_version_id: Type.Optional(Type.String({ maxLength: 200 })),
        start_new_conversation: Type.Boolean({ default: false }),
        simulate: Type.Optional(Simulate),
        user_type: Type.String({ default: "user", minLength: 1, maxLength: 64 }),
      }),
      responses: withErrors({ 200: ChatResponse }, [404, 409, 501, 502, 504]),
      raw: true,
      handler: async ({ caller, body, request, reply }) => {
        if (body.simulate) throw new NotImplementedError("Simulated conversations (simulate) are not available yet");
        const turn = {
          organizationId: caller.organizationId,
          threadId: body.thread_id,
          projectName: body.service_config_name,
          ...(body.config_version_id === undefined ? {} : { configVersionId: body.config_version_id }),
          startNewConversation: body.start_new_conversation,
          userMessage: { content: body.message, extras: { user_type: body.user_type } },
          task: "reply" as const,
        };
        if (!body.streaming) return reply.send(chatResponse(await chat.turn(turn)));
        const stream = new ChatStream(reply, wantsEventStream(request.headers.accept));
        try {
          stream.finish(chatResponse(await chat.turn({ ...turn, onToken: (token) => stream.token(token) })));
        } catch (error) {
          if (!stream.hasStarted) throw error;
          request.log.warn({ err: error }, "streamed chat failed after its first token");
          stream.fail(error);
        }
        return reply;
      },
    }),
  ];
}
