import { readFileSync } from "node:fs";

/**
 * The Node flags that package.json's "start" script runs the server with (`node <flags> bin/parley.js serve`), so
 * that a benchmark's server is the one `npm start` gives.
 */
export function startScriptNodeFlags(): string[] {
  const manifest = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as { scripts: { start: string } };
  const words = manifest.scripts.start.split(/\s+/);
  const entry = words.indexOf("bin/parley.js");
  if (words[0] !== "node" || entry < 0) throw new Error(`package.json's start script is not "node [flags] bin/parley.js serve": ${manifest.scripts.start}`);
  return words.slice(1, entry);
}
