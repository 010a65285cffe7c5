/** One setting that differs between two configurations: its dotted path and its JSON text on each side (absent: undefined). */
export interface ConfigChange {
  path: string;
  before: string | undefined;
  after: string | undefined;
}

/** Every leaf of a JSON value by its dotted path (`agent.knowledge[0].answer`); empty objects and arrays are leaves. */
function leaves(value: unknown, path: string, into: Map<string, string>): Map<string, string> {
  if (Array.isArray(value) && value.length > 0) value.forEach((item, index) => leaves(item, `${path}[${index}]`, into));
  else if (typeof value === "object" && value !== null && Object.keys(value).length > 0) {
    for (const [key, item] of Object.entries(value)) leaves(item, path ? `${path}.${key}` : key, into);
  } else into.set(path, JSON.stringify(value));
  return into;
}

/** The settings that differ between two configurations, in the order they appear (the earlier one's first). */
export function configChanges(before: unknown, after: unknown): ConfigChange[] {
  const old = leaves(before, "", new Map());
  const next = leaves(after, "", new Map());
  const paths = [...new Set([...old.keys(), ...next.keys()])];
  return paths.filter((path) => old.get(path) !== next.get(path)).map((path) => ({ path, before: old.get(path), after: next.get(path) }));
}
