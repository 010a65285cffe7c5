import { Type } from "@sinclair/typebox";
import { callDirections, callStatuses, callTypes } from "../domain/calls/call-states.js";
import type { CallService } from "../domain/calls/call-service.js";
import { recordingLink, type RecordingStorage, type RecordingUrlSigner } from "../domain/calls/recordings.js";
import { publicBaseOf, type PublicAddressSettings } from "./public-base.js";
import { defineRoute, type RouteDefinition } from "./route.js";
import { DateTimeField, Nullable, withErrors } from "./schemas.js";

const literals = <T extends string>(values: readonly T[]) => Type.Union(values.map((value) => Type.Literal(value)));

export const CallSummary = Type.Object({
  id: Type.String(),
  thread_id: Type.String(),
  call_type: Type.String(),
  status: Type.String(),
  created_at: Type.String(),
  conversation_id: Nullable(Type.Integer()),
  direction: Nullable(Type.String()),
  from_number: Nullable(Type.String()),
  to_number: Nullable(Type.String()),
  scheduled_for: Nullable(Type.String()),
  start_timestamp: Nullable(Type.Integer({ description: "Unix seconds" })),
  end_timestamp: Nullable(Type.Integer({ description: "Unix seconds" })),
  duration_ms: Nullable(Type.Integer()),
  disconnection_reason: Nullable(Type.String()),
});

const Word = Type.Object({ word: Type.String(), start: Type.Number(), end: Type.Number() });

const CallDetail = Type.Composite([
  CallSummary,
  Type.Object({
    transcript: Nullable(Type.String()),
    transcript_object: Nullable(
      Type.Array(Type.Object({ role: Type.String(), content: Type.String(), words: Type.Array(Word) }), {
        description: "Utterances with word timings in seconds from the start of the recording",
      }),
    ),
    recording_url: Nullable(Type.String({ description: "Signed URL of the WAV recording (Parley's own, or the object store's presigned one); expires" })),
    call_analysis: Nullable(
      Type.Object({
        call_summary: Type.String(),
        user_sentiment: Type.String(),
        call_successful: Nullable(Type.Boolean()),
        custom_analysis_data: Type.Record(Type.String(), Type.Unknown()),
      }),
    ),
  }),
]);

const DateOrDateTime = DateTimeField({ format: "date-or-date-time", description: "ISO 8601 date or datetime" });

export function callRoutes(
  calls: CallService,
  recordings: { signer: RecordingUrlSigner; storage: RecordingStorage },
  publicAddress: PublicAddressSettings,
): RouteDefinition[] {
  return [
    defineRoute({
      method: "GET",
      url: "/calls",
      tags: ["calls"],
      summary: "The organization's calls, newest first (keyset cursor pagination)",
      access: "apiKey",
      query: Type.Object({
        status: Type.Optional(Type.Array(literals(callStatuses), { description: "Repeat to allow several" })),
        call_type: Type.Optional(Type.Array(literals(callTypes), { description: "Repeat to allow several" })),
        direction: Type.Optional(Type.Array(literals(callDirections), { description: "Repeat to allow several" })),
        from_date: Type.Optional(DateOrDateTime),
        to_date: Type.Optional(DateOrDateTime),
        thread_id: Type.Optional(Type.String({ maxLength: 200 })),
        project_name: Type.Optional(Type.String({ maxLength: 200 })),
        cursor: Type.Optional(Type.String({ maxLength: 512, description: "Opaque URL-safe Base64 cursor from a previous response" })),
        limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
      }),
      responses: withErrors({ 200: Type.Object({ calls: Type.Array(CallSummary), pagination: Type.Object({ cursor: Nullable(Type.String()) }) }) }),
      handler: async ({ caller, query, request }) => {
        const rawTo = (request.query as Record<string, string[] | undefined>)["to_date"]?.at(-1);
        return calls.list(caller.organizationId, {
          ...(query.status ? { statuses: query.status } : {}),
          ...(query.call_type ? { callTypes: query.call_type } : {}),
          ...(query.direction ? { directions: query.direction } : {}),
          ...(query.from_date ? { from: query.from_date } : {}),
          ...(query.to_date ? { to: { at: query.to_date, wholeDay: /^\d{4}-\d{2}-\d{2}$/.test(rawTo ?? "") } } : {}),
          ...(query.thread_id !== undefined ? { threadId: query.thread_id } : {}),
          ...(query.project_name !== undefined ? { projectName: query.project_name } : {}),
          ...(query.cursor !== undefined ? { cursor: query.cursor } : {}),
          limit: query.limit,
        });
      },
    }),
    defineRoute({
      method: "GET",
      url: "/calls/:call_id",
      tags: ["calls"],
      summary: "One call with its transcript, recording URL and analysis",
      access: "apiKey",
      params: Type.Object({ call_id: Type.String({ maxLength: 200 }) }),
      responses: withErrors({ 200: CallDetail }, [404]),
      handler: async ({ caller, params, request }) => {
        const base = publicBaseOf(request, publicAddress);
        return calls.detail(caller.organizationId, params.call_id, (callId, key) => recordingLink(recordings.storage, recordings.signer, base, callId, key));
      },
    }),
  ];
}
