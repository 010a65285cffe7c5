import { Type } from "@sinclair/typebox";
import { defineRoute, type RouteDefinition } from "./route.js";

/** `GET /widget.js`: the browser widget, bundled from src/web on first request and kept. */
export function webRoutes(buildWidget: () => Promise<string>): RouteDefinition[] {
  let widget: Promise<string> | undefined;
  return [
    defineRoute({
      method: "GET",
      url: "/widget.js",
      tags: ["system"],
      summary: "The browser widget: chat and voice for a thread, with a thread token from the embedding site",
      access: "public",
      responses: { 200: Type.String() },
      raw: true,
      hidden: true,
      handler: async ({ reply }) => {
        widget ??= buildWidget().catch((error: unknown) => {
          widget = undefined;
          throw error;
        });
        return reply.type("text/javascript; charset=utf-8").header("cache-control", "public, max-age=300").send(await widget);
      },
    }),
  ];
}
