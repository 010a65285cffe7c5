import { Type, type Static } from "@sinclair/typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { Caller } from "../domain/access/credentials.js";
import type { SimulationResult, SimulationService } from "../domain/simulations/service.js";
import { DEFAULT_MAX_TURNS, MAX_TURNS_LIMIT } from "../domain/simulations/simulation.js";
import { ChatStream, wantsEventStream } from "./chat-stream.js";
import { defineRoute, type RouteDefinition } from "./route.js";
import { Nullable, withErrors } from "./schemas.js";

/** The `simulate` object of POST /chat. */
export const SimulateBody = Type.Object({
  initial_messages: Type.Array(Type.String({ minLength: 1, maxLength: 32_000 }), {
    default: [],
    maxItems: MAX_TURNS_LIMIT - 1,
    description: "Scripted user turns played after `message`, before the simulated user takes over.",
  }),
  max_turns: Type.Integer({
    minimum: 1,
    maximum: MAX_TURNS_LIMIT,
    default: DEFAULT_MAX_TURNS,
    description: "User turns at most, `message` and `initial_messages` included.",
  }),
  agent_type: Type.Optional(Type.String({ maxLength: 200, description: "The kind of agent the simulated user talks to." })),
  industry: Type.Optional(Type.String({ maxLength: 200 })),
  behavioural_prompt: Type.Optional(Type.String({ maxLength: 10_000, description: "How the simulated user behaves." })),
  topic: Type.Optional(Type.String({ maxLength: 1000, description: "What the simulated user wants." })),
  create: Type.Boolean({ default: false, description: "Store the conversation in a new SIMULATION thread; false is a dry run." }),
  evaluate: Type.Boolean({ default: false, description: "Judge the conversation." }),
});

const Turn = Type.Object({
  role: Type.Union([Type.Literal("user"), Type.Literal("assistant")]),
  message: Type.String(),
  source: Type.Union([Type.Literal("message"), Type.Literal("scripted"), Type.Literal("simulated"), Type.Literal("agent")]),
});

const EvaluationSchema = Type.Object({
  verdict: Type.Union([Type.Literal("pass"), Type.Literal("fail")]),
  score: Type.Number({ minimum: 0, maximum: 1 }),
  judge: Type.Union([Type.Literal("llm"), Type.Literal("heuristic")]),
  criteria: Type.Array(Type.Object({ key: Type.String(), passed: Type.Boolean(), score: Type.Number(), reasoning: Type.String() })),
  note: Type.Optional(Type.String({ description: "Why the heuristic judge stands in for the model's, when the model judge failed" })),
});

const StopReasonSchema = Type.Union([Type.Literal("max_turns"), Type.Literal("user_ended"), Type.Literal("agent_ended")]);

export const SimulationExtras = Type.Object({
  id: Type.String(),
  thread_id: Nullable(Type.String()),
  turns: Type.Array(Turn),
  stop_reason: StopReasonSchema,
  evaluation: Type.Optional(EvaluationSchema),
});

const SimulationRun = Type.Object({
  id: Type.String(),
  thread_id: Type.String(),
  source_thread_id: Type.String(),
  project_name: Type.String(),
  config_version_id: Type.String(),
  simulate: Type.Object({
    initial_messages: Type.Array(Type.String()),
    max_turns: Type.Integer(),
    agent_type: Nullable(Type.String()),
    industry: Nullable(Type.String()),
    topic: Nullable(Type.String()),
    behavioural_prompt: Nullable(Type.String()),
    create: Type.Boolean(),
    evaluate: Type.Boolean(),
  }),
  turns: Type.Array(Turn),
  stop_reason: StopReasonSchema,
  evaluation: Type.Optional(EvaluationSchema),
  created_at: Type.String({ format: "date-time" }),
});

function simulationResponse(result: SimulationResult) {
  return {
    message: result.message,
    extras: {
      user_message_id: result.userMessageId,
      conversation_id: result.conversationId,
      reply_message_id: result.replyMessageId,
      simulation: result.simulation,
    },
  };
}

interface SimulateChatBody {
  thread_id: string;
  message: string;
  service_config_name: string;
  streaming: boolean;
  config_version_id?: string | undefined;
  user_type: string;
  simulate: Static<typeof SimulateBody>;
}

/** Simulations create threads and runs of the organization, so they need its API key (`apiKeyOnly` of POST /chat's access). */
export const simulationNeedsApiKey = "Simulations need the organization's API key, not a thread token";

/** POST /chat with `simulate`: a whole simulated conversation, answered like a chat (streamed turn by turn, each token line naming its turn). */
export async function simulateChat(
  simulations: SimulationService,
  { caller, body, request, reply }: { caller: Caller; body: SimulateChatBody; request: FastifyRequest; reply: FastifyReply },
): Promise<FastifyReply> {
  const { simulate } = body;
  const run = (onToken?: (token: string, turn: number) => void) =>
    simulations.run({
      organizationId: caller.organizationId,
      sourceThreadId: body.thread_id,
      projectName: body.service_config_name,
      ...(body.config_version_id === undefined ? {} : { configVersionId: body.config_version_id }),
      message: body.message,
      userType: body.user_type,
      settings: {
        initialMessages: simulate.initial_messages,
        maxTurns: simulate.max_turns,
        ...(simulate.agent_type === undefined ? {} : { agentType: simulate.agent_type }),
        ...(simulate.industry === undefined ? {} : { industry: simulate.industry }),
        ...(simulate.topic === undefined ? {} : { topic: simulate.topic }),
        ...(simulate.behavioural_prompt === undefined ? {} : { behaviouralPrompt: simulate.behavioural_prompt }),
        create: simulate.create,
        evaluate: simulate.evaluate,
      },
      ...(onToken ? { onToken } : {}),
    });
  if (!body.streaming) return reply.send(simulationResponse(await run()));
  const stream = new ChatStream(reply, wantsEventStream(request.headers.accept));
  try {
    stream.finish(simulationResponse(await run((token, turn) => stream.token(token, { turn }))));
  } catch (error) {
    if (!stream.hasStarted) throw error;
    request.log.warn({ err: error }, "streamed simulation failed after its first token");
    stream.fail(error);
  }
  return reply;
}

export function simulationRoutes(simulations: SimulationService): RouteDefinition[] {
  return [
    defineRoute({
      method: "GET",
      url: "/simulations/:simulation_id",
      tags: ["simulations"],
      summary: "A stored simulation run (POST /chat with `simulate.create: true`), with its turns and evaluation",
      access: "apiKey",
      params: Type.Object({ simulation_id: Type.String({ maxLength: 200 }) }),
      responses: withErrors({ 200: SimulationRun }, [404]),
      handler: async ({ caller, params }) => simulations.get(caller.organizationId, params.simulation_id),
    }),
  ];
}
