// Runs the whole suite in one Node process (see test/main.ts) with the spec reporter.
import { spawnSync } from "node:child_process";

const result = spawnSync(
  process.execPath,
  ["--import", "tsx", "--test-reporter=spec", "--test-reporter-destination=stdout", "test/main.ts", ...process.argv.slice(2)],
  { stdio: "inherit" },
);
if (result.signal) process.stderr.write(`the test process was ended by ${result.signal}\n`);
process.exit(result.status ?? 1);
