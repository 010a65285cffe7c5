import { createRequire } from "node:module";

/** The part of koffi used here, typed (koffi's own types are `any`). */
interface Koffi {
  load(path: string): { func(declaration: string): { async(pad: number, done: (error: unknown) => void): void } };
}

export interface FreedMemoryTrimmer {
  stop(): void;
}

/**
 * Hands the memory that glibc's allocator holds free back to the operating system, every `intervalMs` (0: never).
 *
 * Memory freed by C code stays in the allocator's arenas (one per thread that allocated) rather than returning to the
 * system. In a Parley process most of it is left by V8's background compiler threads optimizing PGlite's WebAssembly:
 * tens of megabytes of compiler scratch memory, freed when each function is done, that would otherwise count as
 * resident for the life of the process (docs/deployment.md, "Memory and start-up", has the figures). `malloc_trim`
 * returns every free page of every arena. It runs on libuv's thread pool, not on the event loop, and takes a few
 * milliseconds. Where the C library has no `malloc_trim` (musl, macOS), this does nothing.
 */
export function trimFreedMemory(intervalMs: number): FreedMemoryTrimmer {
  if (intervalMs === 0) return { stop: () => undefined };
  let trim: (done: () => void) => void;
  try {
    const koffi = createRequire(import.meta.url)("koffi") as Koffi;
    const mallocTrim = koffi.load("libc.so.6").func("int malloc_trim(size_t pad)");
    trim = (done) => mallocTrim.async(0, done);
  } catch {
    return { stop: () => undefined };
  }
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    trim((): void => {
      running = false;
    });
  }, intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
