import { createRequire } from "node:module";
import { SpeechUnavailableError, type SpeechEngineKind } from "../errors.js";

/** koffi's own types are loose (`any`); this is the part of it Parley's offline recognizer uses, typed. */
export interface NativeFunction {
  (...args: unknown[]): unknown;
  async(...args: unknown[]): void;
}
export interface NativeLibrary {
  func(declaration: string): NativeFunction;
}
export interface Koffi {
  load(path: string): NativeLibrary;
  /** Reads a value of `type` at `offset` bytes into the memory a pointer points to. */
  decode(pointer: unknown, offset: number, type: unknown): unknown;
  /** Writes a value of `type` there. */
  encode(pointer: unknown, offset: number, type: unknown, value: unknown): void;
  /** A fixed-length array type of `length` elements of `type`. */
  array(type: string, length: number): unknown;
  /** The address a pointer holds. */
  address(pointer: unknown): bigint;
}

/** koffi, the FFI that reaches Debian's speech libraries; an engine that needs it is unavailable when it does not load. */
export function loadKoffi(kind: SpeechEngineKind): Koffi {
  try {
    return createRequire(import.meta.url)("koffi") as Koffi;
  } catch (error) {
    throw new SpeechUnavailableError(kind, `the koffi package does not load here: ${String(error)}`);
  }
}

/** Runs a native call on libuv's thread pool, so that decoding never stalls the event loop. */
export function onThreadPool<T>(fn: NativeFunction, ...args: unknown[]): Promise<T> {
  return new Promise((resolve, reject) =>
    fn.async(...args, (error: unknown, result: T) => (error ? reject(error instanceof Error ? error : new Error(String(error))) : resolve(result))),
  );
}
