import type { RecordingStorage } from "../domain/calls/recordings.js";
import type { Queryable } from "../domain/shared/database.js";

export interface RecordingsCopied {
  copied: number;
  bytes: number;
  /** Keys that calls name but the source does not hold (deleted by hand, or never written). */
  missing: string[];
}

async function readWhole(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks);
}

/**
 * Copies every recording that a call of `db` names from one storage into another, one at a time (a recording is a few
 * megabytes), each checked by its size on the target. Writing a key again replaces it, so a copy that stopped half way
 * is simply run again.
 */
export async function copyRecordings(db: Queryable, from: RecordingStorage, to: RecordingStorage, onCopied?: (key: string) => void): Promise<RecordingsCopied> {
  const rows = await db.query<{ recording_key: string }>("SELECT DISTINCT recording_key FROM calls WHERE recording_key IS NOT NULL ORDER BY recording_key");
  const result: RecordingsCopied = { copied: 0, bytes: 0, missing: [] };
  for (const { recording_key: key } of rows) {
    const size = await from.size(key);
    if (size === undefined) {
      result.missing.push(key);
      continue;
    }
    const data = await readWhole(from.read(key));
    await to.put(key, data);
    const stored = await to.size(key);
    if (stored !== data.length) throw new Error(`recording ${key} was copied but the target holds ${stored ?? "no"} bytes of ${data.length}`);
    result.copied += 1;
    result.bytes += data.length;
    onCopied?.(key);
  }
  return result;
}
