import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { describe, test } from "node:test";
import { trimFreedMemory } from "../src/process-memory.js";
import { pollUntil } from "./support/polling.js";

/** The C library's allocator, reached the way src/process-memory.ts reaches it. */
interface Libc {
  malloc(size: number): unknown;
  free(pointer: unknown): void;
  memset(pointer: unknown, value: number, size: number): unknown;
}

function libc(): Libc {
  const koffi = createRequire(import.meta.url)("koffi") as { load(path: string): { func(declaration: string): (...args: unknown[]) => unknown } };
  const library = koffi.load("libc.so.6");
  const malloc = library.func("void *malloc(size_t size)");
  const free = library.func("void free(void *pointer)");
  const memset = library.func("void *memset(void *pointer, int value, size_t size)");
  return { malloc: (size) => malloc(size), free: (pointer) => void free(pointer), memset: (pointer, value, size) => memset(pointer, value, size) };
}

async function residentMb(): Promise<number> {
  return Number(/VmRSS:\s+(\d+)/.exec(await readFile("/proc/self/status", "utf8"))?.[1] ?? 0) / 1024;
}

describe("freed C memory handed back to the system", () => {
  test("memory that C code freed below a live allocation stops counting as resident once the trimmer has run", async () => {
    const c = libc();
    // 64 MB in blocks small enough to come from the allocator's heap (not mmap), each written so that it is resident,
    // then all freed but the last, which keeps the heap's top in use: the allocator would return none of it by itself.
    const blockBytes = 64 * 1024;
    const blocks = Array.from({ length: 1024 }, () => c.malloc(blockBytes));
    for (const block of blocks) c.memset(block, 1, blockBytes);
    for (const block of blocks.slice(0, -1)) c.free(block);
    const before = await residentMb();
    const trimmer = trimFreedMemory(50);
    try {
      const after = await pollUntil(residentMb, (rss) => rss < before - 32, { what: `resident memory below ${(before - 32).toFixed(0)} MB`, timeoutMs: 10_000, intervalMs: 100 });
      assert.ok(after < before - 32);
    } finally {
      trimmer.stop();
      c.free(blocks.at(-1));
    }
  });
});
