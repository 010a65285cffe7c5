import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * Bundles the browser code under src/web with esbuild, in memory, when the server starts: no build step for the
 * user, and `npm start` serves what the source says. About 50 ms.
 */
export async function buildWidget(): Promise<string> {
  const { build } = await import("esbuild");
  const here = path.dirname(fileURLToPath(import.meta.url));
  const result = await build({
    entryPoints: [path.join(here, "widget-entry.ts")],
    bundle: true,
    format: "iife",
    target: "es2020",
    minify: true,
    write: false,
    legalComments: "none",
  });
  const [output] = result.outputFiles;
  if (!output) throw new Error("esbuild produced no widget");
  return output.text;
}
