import { createRequire } from "node:module";
import { SpeechUnavailableError, type SpeechEngineKind } from "./errors.js";

/** koffi's own types are loose (`any`); this is the part of it Parley's offline engines use, typed. */
export interface NativeFunction {
  (...args: unknown[]): unknown;
  async(...args: unknown[]): void;
}
export interface NativeLibrary {
  func(declaration: string): NativeFunction;
}
export interface Koffi {
  load(path: string): NativeLibrary;
  struct(name: string, fields: Record<string, string>): unknown;
  array(type: string, length: number, hint: "Typed"): unknown;
  decode(pointer: unknown, type: unknown): unknown;
  config(settings?: Record<string, number>): Record<string, number>;
}

/**
 * koffi runs an async native call on a stack of its own, 128 KiB by default: flite's clustergen voices need far more
 * (a call with them overran it and crashed the process). 4 MiB, as much as its synchronous calls get and more.
 */
const ASYNC_STACK_BYTES = 4 * 1024 * 1024;
let configured: Koffi | undefined;

/** koffi, the FFI that reaches Debian's speech libraries; an engine that needs it is unavailable when it does not load. */
export function loadKoffi(kind: SpeechEngineKind): Koffi {
  if (configured) return configured;
  let koffi: Koffi;
  try {
    koffi = createRequire(import.meta.url)("koffi") as Koffi;
  } catch (error) {
    throw new SpeechUnavailableError(kind, `the koffi package does not load here: ${String(error)}`);
  }
  koffi.config({ ...koffi.config(), async_stack_size: ASYNC_STACK_BYTES });
  configured = koffi;
  return koffi;
}

/** Runs a native call on libuv's thread pool, so that synthesis or decoding never stalls the event loop. */
export function onThreadPool<T>(fn: NativeFunction, ...args: unknown[]): Promise<T> {
  return new Promise((resolve, reject) =>
    fn.async(...args, (error: unknown, result: T) => (error ? reject(error instanceof Error ? error : new Error(String(error))) : resolve(result))),
  );
}
