import { Type } from "@sinclair/typebox";
import type { CallService } from "../domain/calls/call-service.js";
import { NotFoundError, RangeNotSatisfiableError } from "../domain/shared/errors.js";
import { parseRangeHeader, type RecordingStorage, type RecordingUrlSigner } from "../domain/calls/recordings.js";
import { defineRoute, type RouteDefinition } from "./route.js";
import { Detail } from "./schemas.js";

/** The call whose recording a file name names (`{call_id}.wav`). */
function recordedCallId(file: string): string {
  const callId = /^(.+)\.wav$/.exec(file)?.[1];
  if (callId === undefined) throw new NotFoundError("Recording not found");
  return callId;
}

/** Self-hosted recordings, served to whoever holds a signed URL from `GET /calls/{call_id}` (no Authorization). */
export function recordingRoutes(calls: CallService, signer: RecordingUrlSigner, storage: RecordingStorage): RouteDefinition[] {
  return [
    defineRoute({
      method: "GET",
      url: "/recordings/:file",
      tags: ["calls"],
      summary: "A call's WAV recording at its signed URL, with Range support",
      description: "`{call_id}.wav?expires=…&signature=…` as `recording_url` gives it. A tampered or expired link is 403.",
      access: { signedUrl: { signer, resource: ({ params }) => recordedCallId(params.file), refusal: "Invalid or expired recording link" } },
      params: Type.Object({ file: Type.String({ maxLength: 300 }) }),
      query: Type.Object({ expires: Type.Optional(Type.String({ maxLength: 32 })), signature: Type.Optional(Type.String({ maxLength: 128 })) }),
      responses: { 200: Type.String({ description: "audio/wav" }), 206: Type.String({ description: "audio/wav" }), 403: Detail, 404: Detail, 416: Detail },
      raw: true,
      resource: ({ params }) => calls.recordingKey(recordedCallId(params.file)),
      handler: async ({ resource: key, request, reply }) => {
        const size = await storage.size(key);
        if (size === undefined) throw new NotFoundError("Recording not found");
        const range = parseRangeHeader(request.headers.range, size);
        reply.header("accept-ranges", "bytes");
        if (range === "unsatisfiable") throw new RangeNotSatisfiableError(size);
        reply.header("content-type", "audio/wav").header("cache-control", "private, max-age=60");
        if (range === undefined) return reply.code(200).header("content-length", size).send(storage.read(key));
        return reply
          .code(206)
          .header("content-range", `bytes ${range.start}-${range.end}/${size}`)
          .header("content-length", range.end - range.start + 1)
          .send(storage.read(key, range));
      },
    }),
  ];
}
