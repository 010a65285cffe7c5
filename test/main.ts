import { readdir } from "node:fs/promises";
import path from "node:path";
import { after, test } from "node:test";
import { pathToFileURL } from "node:url";
import { closeDatabases, openDatabases } from "./support/databases.js";

/**
 * The whole suite runs in one process so that the databases are opened once and shared: PGlite takes seconds to
 * open and holds about half a gigabyte. `npm test -- <filter>` runs only the test files whose path contains it.
 */
async function testFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((entry) => {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) return testFiles(full);
      return Promise.resolve(entry.name.endsWith(".test.ts") ? [full] : []);
    }),
  );
  return nested.flat().sort();
}

const filters = process.argv.slice(2);
const databases = await openDatabases();
process.stdout.write(`# databases: ${databases.map((database) => database.name).join(", ")}\n`);
after(closeDatabases);
const root = path.dirname(new URL(import.meta.url).pathname);
/**
 * Suites start as soon as a file declares them, and the runner ends (closing the databases) when nothing is queued.
 * This first test holds the queue open until every file is imported, so a quick suite that finishes while the next
 * file still loads cannot end the run early.
 */
const loading = (async () => {
  for (const file of await testFiles(root)) {
    if (filters.length === 0 || filters.some((filter) => file.includes(filter))) await import(pathToFileURL(file).href);
  }
})();
test("every test file loads", () => loading);
