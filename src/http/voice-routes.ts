import { Type } from "@sinclair/typebox";
import type { CallService } from "../domain/calls/call-service.js";
import { defineRoute, type RouteDefinition } from "./route.js";
import { DateTimeField, Nullable, ThreadIdParams, withErrors } from "./schemas.js";
import { isPlainObject } from "./validation/plain-object.js";

const PhoneCall = Type.Object({
  id: Type.String(),
  call_type: Type.String(),
  status: Type.String(),
  to_number: Nullable(Type.String()),
  from_number: Nullable(Type.String()),
  scheduled_for: Nullable(Type.String()),
  start_timestamp: Nullable(Type.Integer({ description: "Unix seconds" })),
  end_timestamp: Nullable(Type.Integer({ description: "Unix seconds" })),
  duration_ms: Nullable(Type.Integer()),
});

export function voiceRoutes(calls: CallService): RouteDefinition[] {
  return [
    defineRoute({
      method: "POST",
      url: "/voice/:thread_id/phone-call",
      tags: ["voice"],
      summary: "Create a phone call for a thread, now or at `scheduled_for`",
      description:
        "`callee` in E.164 or an international format with its country code. A project with several phone numbers needs " +
        "`voice_provider_account_id`. One active (queued, scheduled or ongoing) phone call per thread: a second is 409.",
      access: "apiKey",
      params: ThreadIdParams,
      body: Type.Object({
        callee: Type.String({ maxLength: 64 }),
        project_id: Type.String({ format: "uuid" }),
        scheduled_for: Type.Optional(Nullable(DateTimeField({ format: "date-time", description: "ISO 8601; must be in the future" }))),
        verification_code: Type.Optional(
          Nullable(Type.String({ maxLength: 200, description: "The prompt variable `{{verification_code}}` of this call only; stored encrypted, never returned" })),
        ),
        appointment_opening_id: Type.Optional(
          Nullable(Type.String({ maxLength: 200, description: "The prompt variable `{{appointment_opening_id}}` of this call, and `call.appointment_opening_id` of each tool request" })),
        ),
        voice_provider_account_id: Type.Optional(Nullable(Type.String({ format: "uuid" }))),
      }),
      responses: withErrors({ 200: PhoneCall }, [404, 409, 502]),
      handler: async ({ caller, params, body, request }) =>
        calls.createPhoneCall(caller.organizationId, params.thread_id, {
          callee: body.callee,
          projectId: body.project_id,
          ...(body.scheduled_for ? { scheduledFor: { at: body.scheduled_for, input: isPlainObject(request.body) ? request.body["scheduled_for"] : undefined } } : {}),
          ...(body.voice_provider_account_id ? { voiceProviderAccountId: body.voice_provider_account_id } : {}),
          ...(typeof body.appointment_opening_id === "string" ? { appointmentOpeningId: body.appointment_opening_id } : {}),
          ...(typeof body.verification_code === "string" ? { verificationCode: body.verification_code } : {}),
        }),
    }),
    defineRoute({
      method: "POST",
      url: "/voice/simulated/inbound",
      tags: ["voice"],
      summary: "Play a simulated caller into the project's first number",
      description:
        "The project answers as it would a real caller (`voice.inbound`): the call is `ongoing` on the caller's thread (found by " +
        "the alias `from`, or created with it), the agent greets, and the project's `voice.simulated` script is the caller's side.",
      access: "apiKey",
      body: Type.Object({
        project_id: Type.String({ format: "uuid" }),
        from: Type.String({ maxLength: 64, description: "The caller's number, E.164 or international with its country code" }),
      }),
      responses: withErrors(
        {
          200: Type.Object({
            id: Type.String(),
            thread_id: Type.String(),
            call_type: Type.String(),
            direction: Nullable(Type.String()),
            status: Type.String(),
            from_number: Nullable(Type.String()),
            to_number: Nullable(Type.String()),
          }),
        },
        [404, 409],
      ),
      handler: async ({ caller, body }) => calls.answerSimulatedCaller(caller.organizationId, { projectId: body.project_id, from: body.from }),
    }),
    defineRoute({
      method: "DELETE",
      url: "/voice/:thread_id/phone-call",
      tags: ["voice"],
      summary: "End the thread's active phone call",
      description: "An ongoing call ends as `manual_stopped`; a scheduled or queued one is cancelled (`cancelled`).",
      access: "apiKey",
      params: ThreadIdParams,
      responses: withErrors({ 200: Type.Object({ response: Type.String() }) }, [404]),
      handler: async ({ caller, params }) => calls.endPhoneCall(caller.organizationId, params.thread_id),
    }),
    defineRoute({
      method: "POST",
      url: "/voice/:thread_id/web-call",
      tags: ["voice"],
      summary: "Create a web call for a thread",
      description:
        "The call is queued; when it is ready the thread's events WebSocket (`GET /threads/{thread_id}/events`) delivers " +
        "`{\"type\":\"web_call.ready\",\"call_id\",\"access_token\",\"seq\"}`, and the client joins `GET /calls/{call_id}/ws?token=…`.",
      access: { thread: ({ params }) => params.thread_id },
      params: ThreadIdParams,
      body: Type.Object({
        project_id: Type.String({ format: "uuid" }),
        voice_provider_account_id: Type.Optional(Nullable(Type.String({ format: "uuid" }))),
      }),
      responses: withErrors({ 200: Type.Object({ status: Type.String(), message: Type.String() }) }, [404, 502]),
      handler: async ({ caller, params, body }) => {
        return calls.createWebCall(caller.organizationId, params.thread_id, {
          projectId: body.project_id,
          ...(body.voice_provider_account_id ? { voiceProviderAccountId: body.voice_provider_account_id } : {}),
        });
      },
    }),
  ];
}
