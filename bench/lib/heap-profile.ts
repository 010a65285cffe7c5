import path from "node:path";
import type { HeapProfiler } from "node:inspector";
import { fileURLToPath } from "node:url";

export interface AllocationSite {
  /** `function (file:line)`, the file relative to the repository (or under node_modules, or Node's own). */
  site: string;
  /** Bytes per chat allocated by the function itself (its callees not included). */
  bytesPerUnit: number;
  share: number;
}

const repository = fileURLToPath(new URL("../../", import.meta.url));

function describeFrame(frame: HeapProfiler.SamplingHeapProfileNode["callFrame"]): string {
  const name = frame.functionName || "(anonymous)";
  if (frame.url === "") return name;
  const file = frame.url.startsWith("file://") ? path.relative(repository, fileURLToPath(frame.url)) : frame.url;
  return `${name} (${file.replace(/^node_modules\//, "")}:${frame.lineNumber + 1})`;
}

/**
 * The sampled profile's allocations by the function that made them (self size, summed over every call path), the
 * `top` largest, scaled to `units` (the chats of the window).
 */
export function allocationSites(profile: HeapProfiler.SamplingHeapProfile, units: number, top: number): { sampledBytesPerUnit: number; sites: AllocationSite[] } {
  const bySite = new Map<string, number>();
  let total = 0;
  const stack = [profile.head];
  for (let node = stack.pop(); node !== undefined; node = stack.pop()) {
    if (node.selfSize > 0) {
      const site = describeFrame(node.callFrame);
      bySite.set(site, (bySite.get(site) ?? 0) + node.selfSize);
      total += node.selfSize;
    }
    stack.push(...node.children);
  }
  const sites = [...bySite]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([site, bytes]) => ({ site, bytesPerUnit: bytes / units, share: bytes / total }));
  return { sampledBytesPerUnit: total / units, sites };
}
