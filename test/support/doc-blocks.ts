import { spawn } from "node:child_process";
import { readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";

/**
 * The fenced code blocks of the documentation, and what the doc-blocks test does with each.
 *
 * A block in a language a user runs (sh, js, ts…) runs, in its document's order, unless an HTML comment on the
 * line before it (blank lines allowed between) says otherwise:
 * - `<!-- not run: reason -->`: not run, and the reason is given to the reader (a production snippet, an install);
 * - `<!-- save as: name -->`: the block is a file the reader saves under that name, for a later block to use;
 * - `<!-- expect: HTTP 404, 422 -->`: runs, and those statuses are answers the block shows on purpose.
 * An html block is a page, never run by itself: it is saved or says why not. Blocks in other languages (json, xml,
 * none) show data or diagrams and are left alone.
 */

export type BlockPlan =
  | { kind: "run"; runner: "bash" | "node" | "tsx"; expectedStatuses: number[] }
  | { kind: "save"; fileName: string }
  | { kind: "skip"; reason: string }
  | { kind: "illustration" };

export interface DocBlock {
  /** The line of the opening fence, from 1. */
  line: number;
  language: string;
  code: string;
  plan: BlockPlan;
}

export interface DocFile {
  /** Relative to the repository's root, with forward slashes. */
  relativePath: string;
  blocks: DocBlock[];
  /** Blocks whose marker is malformed or missing, each as `file:line: why`. */
  problems: string[];
}

const runners: Record<string, "bash" | "node" | "tsx"> = { sh: "bash", bash: "bash", shell: "bash", js: "node", mjs: "node", javascript: "node", ts: "tsx", typescript: "tsx" };
const pageLanguages = new Set(["html"]);
const fileNamePattern = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

function markerBefore(lines: string[], fenceIndex: number): string | undefined {
  for (let index = fenceIndex - 1; index >= 0; index--) {
    const line = lines[index]?.trim() ?? "";
    if (line === "") continue;
    return /^<!--\s*(.*?)\s*-->$/.exec(line)?.[1];
  }
  return undefined;
}

function planFor(language: string, marker: string | undefined, where: string, problems: string[]): BlockPlan {
  const runner = runners[language];
  const notRun = marker && /^not run\b:?\s*(.*)$/.exec(marker);
  if (notRun) {
    const reason = notRun[1]?.trim() ?? "";
    if (reason.length < 10) problems.push(`${where}: "not run" needs its reason, as in <!-- not run: a production snippet (needs a Twilio account) -->`);
    return { kind: "skip", reason };
  }
  const saveAs = marker && /^save as\b:?\s*(.*)$/.exec(marker);
  if (saveAs) {
    const fileName = saveAs[1]?.trim() ?? "";
    if (!fileNamePattern.test(fileName)) problems.push(`${where}: "save as" needs a plain file name, got "${fileName}"`);
    return { kind: "save", fileName };
  }
  const expect = marker && /^expect\b:?\s*(.*)$/.exec(marker);
  if (expect && !/^HTTP \d{3}(, \d{3})*$/.test(expect[1]?.trim() ?? "")) problems.push(`${where}: "expect" lists statuses, as in <!-- expect: HTTP 404, 422 -->`);
  const expectedStatuses = expect ? [...(expect[1] ?? "").matchAll(/\d{3}/g)].map((match) => Number(match[0])) : [];
  if (runner) return { kind: "run", runner, expectedStatuses };
  if (expect) problems.push(`${where}: "expect" on a ${language || "plain"} block, which does not run`);
  if (pageLanguages.has(language)) {
    problems.push(`${where}: an ${language} block is a page, which does not run by itself: mark it <!-- save as: name --> for a later block to serve, or <!-- not run: reason -->`);
  }
  return { kind: "illustration" };
}

export function parseDocBlocks(relativePath: string, markdown: string): DocFile {
  const lines = markdown.split("\n");
  const blocks: DocBlock[] = [];
  const problems: string[] = [];
  for (let index = 0; index < lines.length; index++) {
    const opening = /^(\s*)(`{3,}|~{3,})\s*([^\s`]*)/.exec(lines[index] ?? "");
    if (!opening) continue;
    const [, indent = "", fence = "", info = ""] = opening;
    const closing = new RegExp(`^\\s*${fence[0] === "`" ? "`" : "~"}{${fence.length},}\\s*$`);
    let end = index + 1;
    while (end < lines.length && !closing.test(lines[end] ?? "")) end++;
    const code = lines
      .slice(index + 1, end)
      .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line.trimStart()))
      .join("\n");
    const language = info.toLowerCase();
    const plan = planFor(language, markerBefore(lines, index), `${relativePath}:${index + 1}`, problems);
    blocks.push({ line: index + 1, language, code: `${code}\n`, plan });
    index = end;
  }
  return { relativePath, blocks, problems };
}

/** README.md, every Markdown file under docs/, and each package's README.md: the documents a user follows. */
export async function readDocFiles(root: string): Promise<DocFile[]> {
  const markdownUnder = async (dir: string): Promise<string[]> => {
    const entries = await readdir(path.join(root, dir), { withFileTypes: true }).catch(() => []);
    const nested = await Promise.all(
      entries.map((entry) => {
        const relative = `${dir}/${entry.name}`;
        if (entry.isDirectory()) return markdownUnder(relative);
        return Promise.resolve(entry.name.endsWith(".md") ? [relative] : []);
      }),
    );
    return nested.flat();
  };
  const packages = await readdir(path.join(root, "packages"), { withFileTypes: true }).catch(() => []);
  const packageReadmes = packages.filter((entry) => entry.isDirectory()).map((entry) => `packages/${entry.name}/README.md`);
  const candidates = ["README.md", ...(await markdownUnder("docs")).sort(), ...packageReadmes.sort()];
  const files = await Promise.all(
    candidates.map(async (relativePath) => {
      const markdown = await readFile(path.join(root, relativePath), "utf8").catch(() => undefined);
      return markdown === undefined ? undefined : parseDocBlocks(relativePath, markdown);
    }),
  );
  return files.filter((file): file is DocFile => file !== undefined);
}

export interface DocRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** Requests made with curl whose answer was an error the block did not expect, each as `line N: status method url`. */
  unexpectedStatuses: string[];
}

function commandFor(block: DocBlock, runner: "bash" | "node" | "tsx"): string {
  if (runner === "bash") return block.code;
  const file = `block-${block.line}.${runner === "node" ? "mjs" : "ts"}`;
  return runner === "node" ? `node ${file}\n` : `node --import tsx ${file}\n`;
}

/**
 * Runs a document's blocks in its order, in one bash (`set -euo pipefail`) in `cwd`, the way a reader pastes them
 * into one shell: js and ts blocks are saved beside it and run with node and tsx, `save as` blocks are saved under
 * their name first. Every curl reports its answer's status on stderr (through a .curlrc in HOME, which is `cwd`),
 * so that an example answered with an error fails even when curl itself succeeds. Processes a block leaves in the
 * background are stopped with the shell.
 */
export async function runDocument(doc: DocFile, cwd: string, env: Record<string, string>, timeoutMs: number): Promise<DocRun> {
  await writeFile(path.join(cwd, ".curlrc"), 'write-out = "%{stderr}::http %{http_code} %{method} %{url_effective}\\n"\n');
  const steps: string[] = ["set -euo pipefail"];
  for (const block of doc.blocks) {
    if (block.plan.kind === "save") await writeFile(path.join(cwd, block.plan.fileName), block.code);
    if (block.plan.kind !== "run") continue;
    if (block.plan.runner !== "bash") await writeFile(path.join(cwd, `block-${block.line}.${block.plan.runner === "node" ? "mjs" : "ts"}`), block.code);
    steps.push(`echo '::doc-block ${block.line}' >&2`, commandFor(block, block.plan.runner));
  }
  const { code, stdout, stderr } = await runShell(steps.join("\n"), cwd, { ...env, HOME: cwd }, timeoutMs);
  const expectedByLine = new Map(doc.blocks.map((block) => [block.line, block.plan.kind === "run" ? block.plan.expectedStatuses : []]));
  const unexpectedStatuses: string[] = [];
  let line = 0;
  for (const output of stderr.split("\n")) {
    const blockStart = /^::doc-block (\d+)$/.exec(output);
    if (blockStart) line = Number(blockStart[1]);
    const answer = /::http (\d{3}) (.*)$/.exec(output);
    if (answer && Number(answer[1]) >= 400 && !expectedByLine.get(line)?.includes(Number(answer[1]))) {
      unexpectedStatuses.push(`${doc.relativePath}:${line}: ${answer[1]} ${answer[2]}`);
    }
  }
  return { code, stdout, stderr, unexpectedStatuses };
}

function runShell(script: string, cwd: string, env: Record<string, string>, timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const shell = spawn("bash", ["-s"], { cwd, env, stdio: ["pipe", "pipe", "pipe"], detached: true });
    let stdout = "";
    let stderr = "";
    shell.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString()));
    shell.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString()));
    const stopGroup = (signal: NodeJS.Signals) => {
      try {
        if (shell.pid !== undefined) process.kill(-shell.pid, signal);
      } catch {
        // the group has already exited
      }
    };
    const timer = setTimeout(() => stopGroup("SIGKILL"), timeoutMs);
    let exitCode: number | null = null;
    shell.on("error", reject);
    // A background process keeps the pipes open after the shell exits: stop the group, then wait for the pipes.
    shell.on("exit", (code) => {
      exitCode = code;
      stopGroup("SIGTERM");
    });
    shell.on("close", () => {
      clearTimeout(timer);
      resolve({ code: exitCode, stdout, stderr });
    });
    shell.stdin.end(script);
  });
}
