/**
 * Every server and load generator of the benchmarks runs in a process of its own, so that none shares an event loop
 * with another. A child announces itself with `{ type: "ready", info }` and then answers `{ id, type, payload }`
 * requests with `{ id, result }` or `{ id, error }`.
 */
import { fork, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";

export interface Child<Info> {
  info: Info;
  pid: number;
  call<T>(type: string, payload?: unknown, timeoutMs?: number): Promise<T>;
  stop(): Promise<void>;
}

interface Reply {
  id: number;
  result?: unknown;
  error?: string;
}

export function benchFile(name: string): string {
  return fileURLToPath(new URL(`../${name}`, import.meta.url));
}

export async function startChild<Info>(file: string, env: Record<string, string> = {}, nodeArgs: string[] = []): Promise<Child<Info>> {
  const startTimeoutMs = 60_000;
  const child: ChildProcess = fork(file, [], {
    execArgv: ["--import", "tsx", ...nodeArgs],
    env: { ...process.env, ...env },
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  const pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  let nextId = 1;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.once("exit", (code, signal) => {
    for (const waiter of pending.values()) waiter.reject(new Error(`${file} exited (${code ?? signal})`));
    pending.clear();
  });
  const info = await new Promise<Info>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${file} did not start within ${startTimeoutMs} ms`)), startTimeoutMs);
    child.once("exit", (code) => reject(new Error(`${file} exited with ${code} before it was ready`)));
    child.on("message", (message: { type?: string; info?: Info } & Reply) => {
      if (message.type === "ready") {
        clearTimeout(timer);
        resolve(message.info as Info);
        return;
      }
      const waiter = pending.get(message.id);
      if (!waiter) return;
      pending.delete(message.id);
      if (message.error !== undefined) waiter.reject(new Error(message.error));
      else waiter.resolve(message.result);
    });
  });
  return {
    info,
    pid: child.pid ?? 0,
    call<T>(type: string, payload?: unknown, timeoutMs = 30 * 60_000): Promise<T> {
      const id = nextId++;
      return new Promise<T>((resolve, reject) => {
        const timer = setTimeout(() => {
          pending.delete(id);
          reject(new Error(`${file}: ${type} timed out after ${timeoutMs} ms`));
        }, timeoutMs);
        pending.set(id, {
          resolve: (value) => {
            clearTimeout(timer);
            resolve(value as T);
          },
          reject: (error) => {
            clearTimeout(timer);
            reject(error);
          },
        });
        child.send({ id, type, payload });
      });
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.send({ id: 0, type: "stop" });
      const killer = setTimeout(() => child.kill("SIGKILL"), 15_000);
      await exited;
      clearTimeout(killer);
    },
  };
}

type Handler = (payload: unknown) => Promise<unknown> | unknown;

/** The child's side: announce `info`, then serve requests with `handlers`; "stop" runs `onStop` and exits. */
export function serveParent(info: unknown, handlers: Record<string, Handler>, onStop: () => Promise<void> = async () => undefined): void {
  const send = (message: unknown) => process.send?.(message);
  process.on("message", (message: { id: number; type: string; payload: unknown }) => {
    if (message.type === "stop") {
      void onStop().finally(() => process.exit(0));
      return;
    }
    const handler = handlers[message.type];
    void (async () => {
      try {
        if (!handler) throw new Error(`unknown request ${message.type}`);
        send({ id: message.id, result: (await handler(message.payload)) ?? null });
      } catch (error) {
        send({ id: message.id, error: error instanceof Error ? error.message : String(error) });
      }
    })();
  });
  // The parent going away (a crash, Ctrl-C) must not leave servers behind.
  process.on("disconnect", () => void onStop().finally(() => process.exit(0)));
  send({ type: "ready", info });
}
