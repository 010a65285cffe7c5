import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { CAPTURE_WORKLET } from "./widget-audio.js";

const consoleDir = fileURLToPath(new URL("./console/", import.meta.url));

export interface Asset {
  body: Buffer;
  contentType: string;
  etag: string;
}

function asset(body: Buffer, contentType: string): Asset {
  return { body, contentType, etag: `"${createHash("sha256").update(body).digest("base64url").slice(0, 27)}"` };
}

/** The console's files; `worklet` is the widget's microphone AudioWorklet, which the console's test call loads. */
export interface ConsoleFiles {
  page: Asset;
  script: Asset;
  styles: Asset;
  worklet: Asset;
}

/**
 * The console's page, script and styles. The script is bundled from src/web/console with esbuild when first asked
 * for (about a fifth of a second), so the user runs no build step; each process keeps the result.
 */
export class ConsoleAssets {
  private bundled: Promise<ConsoleFiles> | undefined;

  get(): Promise<ConsoleFiles> {
    if (!this.bundled) {
      const bundling = this.bundle();
      // A failed build is not kept: the next request tries again.
      bundling.catch(() => {
        if (this.bundled === bundling) this.bundled = undefined;
      });
      this.bundled = bundling;
    }
    return this.bundled;
  }

  private async bundle(): Promise<ConsoleFiles> {
    const [result, page, styles] = await Promise.all([
      build({
        entryPoints: [`${consoleDir}main.ts`],
        bundle: true,
        format: "esm",
        target: "es2022",
        minify: true,
        write: false,
        legalComments: "none",
        logLevel: "silent",
      }),
      readFile(`${consoleDir}index.html`),
      readFile(`${consoleDir}console.css`),
    ]);
    const script = result.outputFiles[0];
    if (!script) throw new Error("esbuild produced no console bundle");
    return {
      page: asset(page, "text/html; charset=utf-8"),
      script: asset(Buffer.from(script.contents), "text/javascript; charset=utf-8"),
      styles: asset(styles, "text/css; charset=utf-8"),
      worklet: asset(Buffer.from(CAPTURE_WORKLET), "text/javascript; charset=utf-8"),
    };
  }
}
