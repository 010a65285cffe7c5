import assert from "node:assert/strict";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { describe, test } from "node:test";
import { fileURLToPath } from "node:url";

/**
 * The direction of imports in src/, so that the map in docs/architecture.md stays true: HTTP edge → domain → store and
 * providers. A rule names who imports (a path prefix under src/) and what it may not import: another module of src/
 * (by path prefix) or a package (by name).
 */

const srcDir = fileURLToPath(new URL("../../src/", import.meta.url));

interface Rule {
  name: string;
  from: string;
  forbids(target: Target): boolean;
}

type Target = { kind: "module"; path: string } | { kind: "package"; name: string };

const under = (target: Target, ...prefixes: string[]): boolean => target.kind === "module" && prefixes.some((prefix) => target.path.startsWith(prefix));
const packageIs = (target: Target, ...names: string[]): boolean => target.kind === "package" && names.includes(target.name);

/** What the domain may import of the providers: the interface of a provider kind, which every adapter implements. */
const providerInterfaces = ["providers/llm/types.ts"];

/** What a provider may import of the domain: shared kinds, the domain's ports and the types of its settings and states. */
const domainTypes = ["domain/shared/", "domain/calls/call-states.ts", "domain/projects/project-config.ts"];
const isPortsFile = (target: Target): boolean => target.kind === "module" && target.path.startsWith("domain/") && path.basename(target.path) === "ports.ts";

/** Vendors' and drivers' packages: the store and the providers wrap them; the domain does not know which is underneath. */
const vendorPackages = ["twilio", "retell-sdk", "pg", "@electric-sql/pglite", "pg-boss", "ioredis", "fastify", "@fastify/websocket", "ws"];

const rules: Rule[] = [
  { name: "nothing below the edge imports HTTP", from: "domain/", forbids: (target) => under(target, "http/") },
  { name: "nothing below the edge imports HTTP", from: "store/", forbids: (target) => under(target, "http/") },
  { name: "nothing below the edge imports HTTP", from: "providers/", forbids: (target) => under(target, "http/") },
  { name: "the domain owns its ports; the store implements them", from: "domain/", forbids: (target) => under(target, "store/") },
  { name: "the domain knows no vendor or driver package", from: "domain/", forbids: (target) => packageIs(target, ...vendorPackages) },
  {
    name: "the domain sees a provider only through its kind's interface",
    from: "domain/",
    forbids: (target) => under(target, "providers/") && !providerInterfaces.includes(target.kind === "module" ? target.path : ""),
  },
  {
    name: "providers import the domain's types and ports, never its services",
    from: "providers/",
    forbids: (target) => under(target, "domain/") && !domainTypes.some((allowed) => under(target, allowed)) && !isPortsFile(target),
  },
  { name: "the store and the providers do not import each other", from: "store/", forbids: (target) => under(target, "providers/") },
  { name: "the store and the providers do not import each other", from: "providers/", forbids: (target) => under(target, "store/") },
  { name: "the composition root is imported by nobody below it", from: "", forbids: (target) => under(target, "app.ts", "voice-wiring.ts", "main.ts", "cli.ts") },
];

async function sourceFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  const nested = await Promise.all(
    entries.map((entry) => {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) return sourceFiles(full);
      return Promise.resolve(/\.tsx?$/.test(entry.name) && !entry.name.endsWith(".d.ts") ? [full] : []);
    }),
  );
  return nested.flat();
}

/** Every module a file names in `import … from`, `export … from`, `import "…"` or `import("…")`, type-only ones too. */
function specifiers(source: string): string[] {
  const found: string[] = [];
  for (const match of source.matchAll(/(?:^|[\s;])(?:import|export)\s[^;]*?\sfrom\s*["']([^"']+)["']|(?:^|[\s;])import\s*["']([^"']+)["']|\bimport\(\s*["']([^"']+)["']\s*\)/gm)) {
    const specifier = match[1] ?? match[2] ?? match[3];
    if (specifier) found.push(specifier);
  }
  return found;
}

function targetOf(file: string, specifier: string): Target | undefined {
  if (specifier.startsWith("node:")) return undefined;
  if (specifier.startsWith(".")) {
    const resolved = path.relative(srcDir, path.resolve(path.dirname(file), specifier)).replace(/\.js$/, ".ts");
    return { kind: "module", path: resolved.split(path.sep).join("/") };
  }
  const parts = specifier.split("/");
  return { kind: "package", name: specifier.startsWith("@") ? parts.slice(0, 2).join("/") : (parts[0] ?? specifier) };
}

interface Edge {
  from: string;
  target: Target;
  label: string;
}

async function edges(): Promise<Edge[]> {
  const all: Edge[] = [];
  for (const file of await sourceFiles(srcDir)) {
    const from = path.relative(srcDir, file).split(path.sep).join("/");
    for (const specifier of specifiers(await readFile(file, "utf8"))) {
      const target = targetOf(file, specifier);
      if (target) all.push({ from, target, label: `${from} -> ${target.kind === "module" ? target.path : target.name}` });
    }
  }
  return all;
}

describe("the direction of imports in src/", () => {
  test("no import goes against the map", async () => {
    const broken = new Set<string>();
    for (const edge of await edges()) {
      const rule = rules.find((candidate) => edge.from.startsWith(candidate.from) && !isCompositionRoot(edge.from, candidate) && candidate.forbids(edge.target));
      if (rule) broken.add(`${edge.label} (${rule.name})`);
    }
    assert.deepEqual([...broken].sort(), []);
  });

  test("the rules see what they are meant to: an upward import is caught", () => {
    const upward: Edge = { from: "domain/chat/chat-service.ts", target: { kind: "module", path: "http/chat-routes.ts" }, label: "" };
    const vendor: Edge = { from: "domain/calls/call-service.ts", target: { kind: "package", name: "retell-sdk" }, label: "" };
    const service: Edge = { from: "providers/voice/router.ts", target: { kind: "module", path: "domain/calls/call-service.ts" }, label: "" };
    const port: Edge = { from: "providers/voice/router.ts", target: { kind: "module", path: "domain/calls/ports.ts" }, label: "" };
    const caught = (edge: Edge) => rules.some((rule) => edge.from.startsWith(rule.from) && !isCompositionRoot(edge.from, rule) && rule.forbids(edge.target));
    assert.deepEqual([upward, vendor, service, port].map(caught), [true, true, true, false]);
    assert.deepEqual(specifiers(`import type { A } from "../a.js";\nexport { b } from './b.js';\nconst c = await import("../c.js");\nimport "./d.js";`), ["../a.js", "./b.js", "../c.js", "./d.js"]);
  });
});

/** The composition root and the entry points may import anything: the rule about importing them is for the others. */
function isCompositionRoot(from: string, rule: Rule): boolean {
  return rule.from === "" && !from.includes("/");
}
