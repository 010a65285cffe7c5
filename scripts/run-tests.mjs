// Runs the whole suite in one Node process (see test/main.ts) with the spec reporter.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

// The runner's own count of failures, from a TAP copy of the report: its exit status alone is not enough, because
// PGlite's WebAssembly runtime sets process.exitCode when an instance closes, which can hide a failed test.
const reportDir = mkdtempSync(path.join(tmpdir(), "parley-tests-"));
const tapReport = path.join(reportDir, "report.tap");
const result = spawnSync(
  process.execPath,
  [
    "--import", "tsx",
    "--test-reporter=spec", "--test-reporter-destination=stdout",
    "--test-reporter=tap", `--test-reporter-destination=${tapReport}`,
    "test/main.ts", ...process.argv.slice(2),
  ],
  { stdio: "inherit" },
);
if (result.signal) process.stderr.write(`the test process was ended by ${result.signal}\n`);
/**
 * The report's last count of tests that failed or were cancelled (the runner cancels every test left when the event
 * loop empties under one, and counts none of them as failed); none when the process ended before writing a report
 * (its exit status then decides).
 */
function failedCount() {
  try {
    const report = readFileSync(tapReport, "utf8");
    const last = (name) => Number([...report.matchAll(new RegExp(`^# ${name} (\\d+)$`, "gm"))].at(-1)?.[1] ?? 0);
    return last("fail") + last("cancelled");
  } catch {
    return 0;
  }
}
const failed = failedCount();
rmSync(reportDir, { recursive: true, force: true });
if (failed > 0 && result.status === 0) process.stderr.write(`${failed} test(s) failed or were cancelled although the test process exited with status 0\n`);
process.exit(failed > 0 ? 1 : (result.status ?? 1));
