import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from "fastify";
import type { RawData, WebSocket } from "ws";
import type { RetellCalls } from "../providers/voice/retell/retell-calls.js";
import type { TwilioCalls } from "../providers/voice/twilio/twilio-calls.js";
import type { LiveSockets } from "../providers/voice/live-sockets.js";
import { RetellLlmSession } from "../providers/voice/retell/retell-llm-session.js";
import { TwilioMediaSession } from "../providers/voice/twilio/twilio-media-session.js";
import { bytesOf, rejectPlainHttp } from "./socket-support.js";

export interface TelephonyRoutesOptions {
  retell: RetellCalls;
  retellSockets: LiveSockets<RetellLlmSession>;
  twilio: TwilioCalls;
  twilioStreams: LiveSockets<TwilioMediaSession>;
  /** `PUBLIC_BASE_URL`, the address Twilio signed its callbacks for. */
  publicBaseUrl: string | undefined;
}

/** Retell sends the whole transcript with each webhook; a long call's transcript is large, but not this large. */
const maxWebhookBytes = 16 * 1024 * 1024;
/** Frames kept while a Retell socket's call is looked up (a second or two): Retell sends a handful at most. */
const maxPendingFrames = 50;

function textOf(data: RawData): string {
  return bytesOf(data).toString();
}

/** A plain HTTP request matches no WebSocket route: 404 in the usual shape, as for the other sockets. */
async function socketsOnly(request: FastifyRequest): Promise<void> {
  rejectPlainHttp(request);
}

/** Each is authenticated by the vendor's own means (below), not by a Parley credential: public to the route catalogue. */
const vendorAccess = { access: "public" } as const;

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return typeof value === "string" ? value : undefined;
}

/**
 * What telephony vendors call: Retell's webhook and Custom LLM socket, Twilio's status callback and media stream.
 * None carries a Parley credential: each is authenticated by the vendor's own means (a signature over the raw body,
 * an unguessable call id, a token Parley put in the call's TwiML), and refused when that fails. Bodies are kept raw
 * in this plugin, since a signature covers the bytes as sent. The sockets are served by the WebSocket plugin of
 * `socket-routes.ts`, which registers this one: their frames have the limit of every Parley socket.
 */
export function telephonyRoutes(options: TelephonyRoutesOptions): FastifyPluginAsync {
  return async (app: FastifyInstance) => {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser("*", { parseAs: "string" }, async (_request: FastifyRequest, body: string | Buffer) => body.toString());

    app.post("/voice/retell/webhook", { schema: { hide: true }, bodyLimit: maxWebhookBytes, config: vendorAccess }, async (request, reply) => {
      await options.retell.webhook(typeof request.body === "string" ? request.body : "", header(request, "x-retell-signature"));
      return reply.code(204).send();
    });

    app.post<{ Params: { call_id: string } }>("/voice/twilio/status/:call_id", { schema: { hide: true }, config: vendorAccess }, async (request, reply) => {
      const body = typeof request.body === "string" ? request.body : "";
      const params = Object.fromEntries(new URLSearchParams(body));
      const url = `${options.publicBaseUrl ?? ""}${request.url}`;
      await options.twilio.status(request.params.call_id, params, header(request, "x-twilio-signature"), url);
      return reply.code(204).send();
    });

    app.get<{ Params: { retell_call_id: string } }>("/voice/retell/llm/:retell_call_id", { websocket: true, config: vendorAccess, logLevel: "warn", preValidation: socketsOnly }, (socket: WebSocket, request) => {
      const pending: string[] = [];
      let session: RetellLlmSession | undefined;
      let release: (() => void) | undefined;
      let closed = false;
      socket.on("message", (data: RawData, isBinary: boolean) => {
        if (isBinary) return;
        if (session) session.receive(textOf(data));
        else if (pending.length < maxPendingFrames) pending.push(textOf(data));
        else socket.close(1008, "too many frames before the call was found");
      });
      socket.on("close", () => {
        closed = true;
        session?.socketClosed();
        release?.();
      });
      void options.retell
        .llmCall(request.params.retell_call_id)
        .then((call) => {
          if (closed) return;
          if (!call) return socket.close(4404, "unknown call");
          session = new RetellLlmSession(call, { send: (text) => socket.readyState === socket.OPEN && socket.send(text), close: (code, reason) => socket.close(code, reason) });
          release = options.retellSockets.add(call.callId, session);
          session.start();
          for (const text of pending.splice(0)) session.receive(text);
        })
        .catch((error: unknown) => {
          request.log.error({ err: error }, "opening a Retell LLM socket failed");
          socket.close(1011, "internal error");
        });
    });

    app.get<{ Params: { call_id: string } }>("/voice/twilio/media/:call_id", { websocket: true, config: vendorAccess, logLevel: "warn", preValidation: socketsOnly }, (socket: WebSocket, request) => {
      const session = new TwilioMediaSession(request.params.call_id, options.twilio.mediaPort(), {
        send: (text) => socket.readyState === socket.OPEN && socket.send(text),
        close: (code, reason) => socket.close(code, reason),
      });
      const release = options.twilioStreams.add(request.params.call_id, session);
      socket.on("message", (data: RawData, isBinary: boolean) => {
        if (!isBinary) session.receive(textOf(data));
      });
      socket.on("close", () => {
        release();
        session.socketClosed();
      });
    });
  };
}
