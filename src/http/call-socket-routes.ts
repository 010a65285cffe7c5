import { Type } from "@sinclair/typebox";
import type { RawData } from "ws";
import type { CallService } from "../domain/calls/call-service.js";
import { containsNul, nulRefusal } from "../domain/shared/storable-text.js";
import { pcmFromBytes } from "../providers/speech/audio.js";
import type { WebCallClientMessage } from "../domain/calls/ports.js";
import { defineSocket, type SocketDefinition } from "./socket.js";
import { bytesOf, frameWindow, guard, maxFrameBytes, type FrameLimits } from "./socket-support.js";

export interface CallSocketOptions {
  calls: CallService;
  pingMs: number;
}

/** A web call expects about one message per turn. */
const callInbound: FrameLimits = { bytes: maxFrameBytes, perWindow: 40 };
/** Microphone audio: 16 kHz PCM is 32 KB a second, in frames of 20 ms or more (the widget sends 100 ms). */
const callAudioInbound: FrameLimits = { bytes: maxFrameBytes, perWindow: 600 };
const maxTurnCharacters = 32_000;
const JoinQuery = Type.Object({ token: Type.String({ maxLength: 4096 }), audio: Type.Boolean({ default: false }) });
const CallPath = Type.Object({ call_id: Type.String({ maxLength: 200 }) });

function parseTurn(text: string): WebCallClientMessage | string {
  let message: unknown;
  try {
    message = JSON.parse(text);
  } catch {
    return "frames must be JSON objects";
  }
  if (typeof message !== "object" || message === null) return "frames must be JSON objects";
  const { type, text: turn } = message as { type?: unknown; text?: unknown };
  if (type === "hangup" || type === "end") return { type: "hangup" };
  if (type !== "text" && type !== "user_message") return 'type must be "text", "user_message" or "hangup"';
  if (containsNul(turn)) return nulRefusal;
  if (typeof turn !== "string" || turn.trim() === "" || turn.length > maxTurnCharacters) return `text must be 1 to ${maxTurnCharacters} characters`;
  return { type: "text", text: turn };
}

/** A web call's own socket (`GET /calls/{call_id}/ws?token=…`), its token checked before the upgrade. */
export function callSocket(options: CallSocketOptions): SocketDefinition {
  return defineSocket({
    url: "/calls/:call_id/ws",
    access: "joinToken",
    params: CallPath,
    query: JoinQuery,
    resource: ({ params, query }) => options.calls.authorizeJoin(params.call_id, query.token),
    open: (socket, { resource: call, query }) => {
      const connection = options.calls.join(
        call,
        {
          send: (message) => {
            if (socket.readyState === socket.OPEN) socket.send(JSON.stringify(message));
          },
          sendAudio: (pcm) => {
            if (socket.readyState === socket.OPEN) socket.send(pcm, { binary: true });
          },
          close: (code, reason) => socket.close(code, reason),
        },
        { audio: query.audio },
      );
      const allow = guard(socket, options.pingMs, callInbound, () => undefined);
      const allowAudio = frameWindow(callAudioInbound);
      socket.on("message", (data: RawData, isBinary: boolean) => {
        const bytes = bytesOf(data);
        if (isBinary) {
          if (!allowAudio(bytes.length)) socket.close(1008, bytes.length > callAudioInbound.bytes ? "message too large" : "too many messages");
          else connection.receiveAudio(pcmFromBytes(bytes));
          return;
        }
        if (!allow(bytes.length)) return;
        const message = parseTurn(bytes.toString());
        if (typeof message === "string") socket.send(JSON.stringify({ type: "error", detail: message }));
        else connection.receive(message);
      });
      socket.on("close", () => connection.disconnected());
    },
  });
}
