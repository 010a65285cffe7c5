import { Type } from "@sinclair/typebox";
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from "fastify";
import type { RawData } from "ws";
import type { CarrierPort } from "../domain/calls/ports.js";
import type { RetellCalls } from "../providers/voice/retell/retell-calls.js";
import type { RetellWebhooks } from "../providers/voice/retell/retell-webhooks.js";
import type { TwilioCalls } from "../providers/voice/twilio/twilio-calls.js";
import type { TwilioWebhooks } from "../providers/voice/twilio/twilio-webhooks.js";
import type { LiveSockets } from "../providers/voice/live-sockets.js";
import { RetellLlmSession } from "../providers/voice/retell/retell-llm-session.js";
import { TwilioMediaSession } from "../providers/voice/twilio/twilio-media-session.js";
import type { AccessChecks } from "./access.js";
import { defineRoute } from "./route.js";
import { registerRoute } from "./server.js";
import { defineSocket, registerSocket } from "./socket.js";
import { bytesOf } from "./socket-support.js";

export interface TelephonyRoutesOptions {
  /** Where what a vendor's verified webhook reports is applied, and its callers answered. */
  carriers: CarrierPort;
  retell: RetellCalls;
  retellWebhooks: RetellWebhooks;
  retellSockets: LiveSockets<RetellLlmSession>;
  twilio: TwilioCalls;
  twilioWebhooks: TwilioWebhooks;
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

const webhookRoute = { tags: ["voice"], hidden: true, responses: { 204: Type.Null() } };

/**
 * What telephony vendors call: Retell's webhook and Custom LLM socket, Twilio's voice webhook, status callbacks and
 * media stream. None carries a Parley credential: each is authenticated by the vendor's own means (a signature over
 * the raw body, an unguessable call id, a token Parley put in the call's TwiML), and refused when that fails. Bodies
 * are kept raw in this plugin, since a signature covers the bytes as sent. A webhook's resource loader verifies it
 * with the vendor's code and returns what it reports in the domain's words, which its handler applies or answers. The sockets are served by the WebSocket plugin of
 * `socket-routes.ts`, which registers this one: their frames have the limit of every Parley socket.
 */
export function telephonyRoutes(checks: AccessChecks, options: TelephonyRoutesOptions): FastifyPluginAsync {
  return async (app: FastifyInstance) => {
    app.removeAllContentTypeParsers();
    app.addContentTypeParser("*", { parseAs: "string" }, async (_request: FastifyRequest, body: string | Buffer) => body.toString());

    registerRoute(
      app,
      defineRoute({
        ...webhookRoute,
        method: "POST",
        url: "/voice/retell/webhook",
        summary: "Retell's call webhooks",
        access: { vendorSignature: "retell" },
        bodyLimit: maxWebhookBytes,
        resource: ({ webhook }) => options.retellWebhooks.verify(webhook),
        handler: async ({ resource, request }) => {
          if ("events" in resource) return options.carriers.report(resource);
          if (!resource.line) return;
          const answer = await options.carriers.answer(resource.line, resource.caller);
          if ("refused" in answer) request.log.info({ retellCallId: resource.caller.vendorCallId, refused: answer.refused }, "an inbound Retell call was not answered");
        },
      }),
      checks,
    );

    registerRoute(
      app,
      defineRoute({
        ...webhookRoute,
        method: "POST",
        url: "/voice/twilio/status/:call_id",
        summary: "Twilio's status callbacks",
        access: { vendorSignature: "twilio", publicBaseUrl: options.publicBaseUrl },
        params: Type.Object({ call_id: Type.String() }),
        resource: ({ params, webhook }) => options.twilioWebhooks.status(params.call_id, webhook),
        handler: ({ resource }) => options.carriers.report(resource),
      }),
      checks,
    );

    registerRoute(
      app,
      defineRoute({
        ...webhookRoute,
        method: "POST",
        url: "/voice/twilio/status",
        summary: "Twilio's status callbacks of a number's calls (its \"call status changes\" webhook)",
        access: { vendorSignature: "twilio", publicBaseUrl: options.publicBaseUrl },
        resource: ({ webhook }) => options.twilioWebhooks.numberStatus(webhook),
        handler: ({ resource }) => options.carriers.report(resource),
      }),
      checks,
    );

    registerRoute(
      app,
      defineRoute({
        ...webhookRoute,
        method: "POST",
        url: "/voice/twilio/inbound",
        summary: "Twilio's voice webhook: a call to one of the projects' numbers, answered with TwiML",
        access: { vendorSignature: "twilio", publicBaseUrl: options.publicBaseUrl },
        responses: { 200: Type.String({ description: "TwiML: <Connect><Stream> to answer, <Reject/> to refuse" }) },
        raw: true,
        resource: ({ webhook }) => options.twilioWebhooks.inbound(webhook),
        handler: async ({ resource, reply }) => reply.type("text/xml").send(await options.twilioWebhooks.answer(resource)),
      }),
      checks,
    );

    registerSocket(
      app,
      defineSocket({
        url: "/voice/retell/llm/:retell_call_id",
        access: { vendorStream: "retell" },
        params: Type.Object({ retell_call_id: Type.String() }),
        open: (socket, { params, request }) => {
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
            .llmCall(params.retell_call_id)
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
        },
      }),
      checks,
    );

    registerSocket(
      app,
      defineSocket({
        url: "/voice/twilio/media/:call_id",
        access: { vendorStream: "twilio" },
        params: Type.Object({ call_id: Type.String() }),
        open: (socket, { params }) => {
          const session = new TwilioMediaSession(params.call_id, options.twilio.mediaPort(), {
            send: (text) => socket.readyState === socket.OPEN && socket.send(text),
            close: (code, reason) => socket.close(code, reason),
          });
          const release = options.twilioStreams.add(params.call_id, session);
          socket.on("message", (data: RawData, isBinary: boolean) => {
            if (!isBinary) session.receive(textOf(data));
          });
          socket.on("close", () => {
            release();
            session.socketClosed();
          });
        },
      }),
      checks,
    );
  };
}
