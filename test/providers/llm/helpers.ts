import assert from "node:assert/strict";
import { ProviderError } from "../../../src/providers/llm/types.js";

export async function collect(stream: AsyncIterable<string>): Promise<string[]> {
  const deltas: string[] = [];
  for await (const delta of stream) deltas.push(delta);
  return deltas;
}

/** Drains a stream that must fail; records the deltas it yielded first and runs `onFirstDelta` after the first one. */
export async function failureOf(stream: AsyncIterable<string>, deltas: string[] = [], onFirstDelta?: () => void): Promise<ProviderError> {
  try {
    for await (const delta of stream) {
      deltas.push(delta);
      if (deltas.length === 1) onFirstDelta?.();
    }
  } catch (error) {
    assert.ok(error instanceof ProviderError, `expected a ProviderError, got ${String(error)}`);
    return error;
  }
  return assert.fail(`expected the stream to fail, it yielded ${JSON.stringify(deltas)}`);
}

export interface RecordedCall {
  url: string;
  headers: Record<string, string>;
  body: unknown;
}

/** A fetch stand-in answering every call with the same raw body, for wire formats a fake server does not produce. */
export function rawFetch(body: string, status = 200): { fetchImpl: typeof fetch; calls: RecordedCall[] } {
  const calls: RecordedCall[] = [];
  const fetchImpl: typeof fetch = async (input, init) => {
    const headers = Object.fromEntries(new Headers(init?.headers).entries());
    calls.push({ url: String(input), headers, body: JSON.parse(String(init?.body)) });
    return new Response(body, { status, headers: { "content-type": status === 200 ? "text/event-stream" : "text/html" } });
  };
  return { fetchImpl, calls };
}
