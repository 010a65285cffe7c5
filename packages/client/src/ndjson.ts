/** The JSON objects of an NDJSON body, one per line, as they arrive. */
export async function* ndjsonLines(body: ReadableStream<Uint8Array>): AsyncGenerator<unknown> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffered = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      buffered += decoder.decode(value, { stream: !done });
      let newline = buffered.indexOf("\n");
      while (newline >= 0) {
        const line = buffered.slice(0, newline).trim();
        buffered = buffered.slice(newline + 1);
        if (line) yield JSON.parse(line);
        newline = buffered.indexOf("\n");
      }
      if (done) break;
    }
    if (buffered.trim()) yield JSON.parse(buffered);
  } finally {
    reader.releaseLock();
    // A consumer that stops early cancels the body; the server still completes and stores the reply.
    await body.cancel().catch(() => undefined);
  }
}
