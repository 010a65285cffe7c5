import { setTimeout as sleep } from "node:timers/promises";

export interface PollOptions {
  /** What is awaited, for the failure message. */
  what?: string;
  timeoutMs?: number;
  intervalMs?: number;
}

/**
 * The suite's one polling helper: reads `probe` until `accept` takes its value, and returns that value. A probe that
 * throws counts as not there yet (a server still starting); the timeout's message carries the last value or error.
 */
export async function pollUntil<T>(probe: () => T | Promise<T>, accept: (value: T) => boolean, options: PollOptions = {}): Promise<T> {
  const { what = "the condition", timeoutMs = 5_000, intervalMs = 20 } = options;
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (accept(value)) return value;
      last = value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      const seen = last instanceof Error ? last.message : JSON.stringify(last);
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last seen: ${seen?.slice(0, 500)}`);
    }
    await sleep(intervalMs);
  }
}

/** Waits until `check` holds. */
export async function eventually(check: () => boolean | Promise<boolean>, options: PollOptions = {}): Promise<void> {
  await pollUntil(check, (held) => held, options);
}
