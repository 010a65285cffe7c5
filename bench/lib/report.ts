import { execFileSync } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { cpus, loadavg, totalmem } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { postgresAdminUrl, type DbKind } from "./context.js";

export type Verdict = "pass" | "miss" | "info" | "peer";

/** One line of the table. `figure` and `baseline` are the numbers; `unit` says what they count. */
export interface Row {
  benchmark: string;
  db: DbKind | "-";
  name: string;
  figure: number;
  unit: string;
  baseline?: number;
  baselineLabel?: string;
  /** figure ÷ baseline, when a baseline exists. */
  ratio?: number;
  target?: string;
  verdict: Verdict;
  note?: string;
}

export interface BenchmarkResult {
  rows: Row[];
  /** Everything else measured, for the JSON file. */
  details: Record<string, unknown>;
  notes: string[];
}

/** A row whose target is a bound on `value` (the figure, or the ratio when `on` is "ratio"). */
export function row(
  fields: Omit<Row, "verdict" | "ratio"> & { target?: string; withoutRatio?: boolean },
  check?: { on: "figure" | "ratio"; atLeast?: number; atMost?: number },
): Row {
  const { withoutRatio, ...rest } = fields;
  const ratio = !withoutRatio && fields.baseline !== undefined && fields.baseline !== 0 ? fields.figure / fields.baseline : undefined;
  let verdict: Verdict = "info";
  if (check) {
    const value = check.on === "ratio" ? ratio : fields.figure;
    const ok = value !== undefined && Number.isFinite(value) && (check.atLeast === undefined || value >= check.atLeast) && (check.atMost === undefined || value <= check.atMost);
    verdict = ok ? "pass" : "miss";
  }
  return { ...rest, ...(ratio === undefined ? {} : { ratio }), verdict };
}

export function formatNumber(value: number): string {
  if (!Number.isFinite(value)) return "n/a";
  if (Number.isInteger(value)) return value.toLocaleString("en-US");
  const abs = Math.abs(value);
  const digits = abs >= 100 ? 0 : abs >= 10 ? 1 : abs >= 1 ? 2 : 3;
  return value.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function formatRatio(ratio: number | undefined): string {
  if (ratio === undefined) return "";
  return ratio < 10 ? `${(ratio * 100).toFixed(1)}%` : `${ratio.toFixed(0)}×`;
}

export function renderTable(rows: Row[]): string {
  const header = ["benchmark", "db", "measure", "figure", "baseline", "ratio", "target", "result"];
  const lines = rows.map((r) => [
    r.benchmark,
    r.db,
    r.name,
    `${formatNumber(r.figure)} ${r.unit}`,
    r.baseline === undefined ? "" : `${formatNumber(r.baseline)}${r.baselineLabel ? ` (${r.baselineLabel})` : ""}`,
    formatRatio(r.ratio),
    r.target ?? "",
    r.verdict,
  ]);
  const widths = header.map((title, column) => Math.max(title.length, ...lines.map((line) => line[column]!.length)));
  const format = (cells: string[]) => cells.map((cell, column) => cell.padEnd(widths[column]!)).join(" | ").trimEnd();
  return [format(header), widths.map((width) => "-".repeat(width)).join("-|-"), ...lines.map(format)].join("\n");
}

/** The same table as Markdown, for docs/benchmarks.md. */
export function renderMarkdown(rows: Row[]): string {
  const lines = ["| benchmark | db | measure | figure | baseline | ratio | target | result |", "|---|---|---|---|---|---|---|---|"];
  for (const r of rows) {
    const baseline = r.baseline === undefined ? "" : `${formatNumber(r.baseline)}${r.baselineLabel ? ` (${r.baselineLabel})` : ""}`;
    lines.push(`| ${r.benchmark} | ${r.db} | ${r.name} | ${formatNumber(r.figure)} ${r.unit} | ${baseline} | ${formatRatio(r.ratio)} | ${r.target ?? ""} | ${r.verdict} |`);
  }
  return lines.join("\n");
}

const repoRoot = fileURLToPath(new URL("../../", import.meta.url));

function git(args: string[]): string {
  try {
    return execFileSync("git", args, { cwd: repoRoot, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
  } catch {
    return "unknown";
  }
}

export async function machine(): Promise<Record<string, unknown>> {
  const client = new pg.Client({ connectionString: postgresAdminUrl });
  await client.connect();
  const settings = await client.query<{ name: string; setting: string; unit: string | null }>(
    "SELECT name, setting, unit FROM pg_settings WHERE name IN ('server_version', 'shared_buffers', 'synchronous_commit', 'fsync', 'max_connections')",
  );
  await client.end();
  const pglite = JSON.parse(await readFile(path.join(repoRoot, "node_modules/@electric-sql/pglite/package.json"), "utf8")) as { version: string };
  return {
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model ?? "unknown",
    memoryGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    // Other work on the machine skews every figure; the 1, 5 and 15 minute load averages when the run ended.
    loadAverage: loadavg().map((value) => Math.round(value * 100) / 100),
    node: process.version,
    postgres: Object.fromEntries(settings.rows.map((s) => [s.name, s.unit ? `${s.setting} (${s.unit})` : s.setting])),
    pglite: pglite.version,
  };
}

/** Writes bench/results/<ISO date>-<short commit>.json and returns its path. */
export async function saveResults(content: { options: unknown; rows: Row[]; details: Record<string, unknown>; notes: string[] }): Promise<string> {
  const date = new Date().toISOString();
  const commit = git(["rev-parse", "--short", "HEAD"]);
  const dirty = git(["--no-optional-locks", "status", "--porcelain", "--untracked-files=no"]) !== "";
  const file = path.join(repoRoot, "bench/results", `${date.replace(/[:.]/g, "-")}-${commit}.json`);
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, JSON.stringify({ date, commit, dirty, machine: await machine(), ...content }, null, 2) + "\n");
  return file;
}
