import { Type } from "@sinclair/typebox";
import type { ChatService, TurnResult } from "../domain/chat/chat-service.js";
import type { SimulationService } from "../domain/simulations/service.js";
import { ChatStream, wantsEventStream } from "./chat-stream.js";
import { defineRoute, type RouteDefinition } from "./route.js";
import { SimulateBody, SimulationExtras, simulateChat, simulationNeedsApiKey } from "./simulation-routes.js";
import { withErrors } from "./schemas.js";

/** A type array rather than anyOf: the serializer of the chat's hot path keeps a plain check per field. */
const OrNull = <T extends "string" | "integer">(type: T) => Type.Unsafe<T extends "string" ? string | null : number | null>({ type: [type, "null"] });

export const ToolCallView = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    arguments: Type.Unknown({ description: "The arguments the model wrote, parsed (the text itself when it was not JSON)." }),
    status: Type.Union([Type.Literal("ok"), Type.Literal("error"), Type.Literal("timeout")]),
    result: Type.Unknown({ description: "The receiver's answer (JSON parsed, else text, first 16 KiB), or `{\"error\": \"…\"}`." }),
    duration_ms: Type.Integer(),
  },
  { title: "ToolCall" },
);

export const ChatResponse = Type.Object({
  message: Type.String(),
  extras: Type.Object({
    user_message_id: OrNull("string"),
    conversation_id: OrNull("integer"),
    reply_message_id: OrNull("string"),
    tool_calls: Type.Optional(Type.Array(ToolCallView, { description: "The tools the agent called in this turn; absent when none." })),
    simulation: Type.Optional({ ...SimulationExtras, description: "With `simulate` only; the three ids are then the last turn's, null in a dry run." }),
  }),
});

export function chatResponse(result: TurnResult) {
  return {
    message: result.message,
    extras: {
      user_message_id: result.userMessageId ?? "",
      conversation_id: result.conversationId,
      reply_message_id: result.replyMessageId,
      ...(result.toolCalls.length > 0 ? { tool_calls: result.toolCalls } : {}),
    },
  };
}

export function chatRoutes(chat: ChatService, simulations: SimulationService): RouteDefinition[] {
  return [
    defineRoute({
      method: "POST",
      url: "/chat",
      tags: ["chat"],
      summary: "Send a user message to a thread and get the AI reply, whole or streamed",
      description:
        "With `streaming: true` the reply is NDJSON: `{\"token\",\"index\"}` lines, then the complete chat response; " +
        "with `Accept: text/event-stream` the same as server-sent events (`token`, `message`, `error`). " +
        "With `simulate`, a whole simulated conversation (needs the API key): token lines carry `turn`, the index of " +
        "their turn in `extras.simulation.turns`; see docs/simulation.md.",
      access: { thread: ({ body }) => body.thread_id, apiKeyOnly: ({ body }) => (body.simulate ? simulationNeedsApiKey : undefined) },
      body: Type.Object({
        thread_id: Type.String({ maxLength: 200 }),
        message: Type.String({ minLength: 1, maxLength: 32_000 }),
        service_config_name: Type.String({ maxLength: 200 }),
        streaming: Type.Boolean({ default: false }),
        config_version_id: Type.Optional(Type.String({ maxLength: 200 })),
        start_new_conversation: Type.Boolean({ default: false }),
        simulate: Type.Optional(SimulateBody),
        user_type: Type.String({ default: "user", minLength: 1, maxLength: 64 }),
      }),
      responses: withErrors({ 200: ChatResponse }, [404, 409, 502, 504]),
      raw: true,
      handler: async ({ caller, body, request, reply }) => {
        if (body.simulate) return simulateChat(simulations, { caller, body: { ...body, simulate: body.simulate }, request, reply });
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
