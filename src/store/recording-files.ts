import { randomUUID } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdir, rename, rm, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { InvalidOperationError } from "../domain/shared/errors.js";
import type { ByteRange, RecordingStorage } from "../domain/calls/recordings.js";

/**
 * A key is one plain file name: letters, digits, ".", "_" and "-", starting with a letter or digit, so that no key
 * can climb out of the folder ("..", "/", "\"), name a hidden file or name one of the temporary files below.
 */
const SAFE_KEY = /^[A-Za-z0-9][A-Za-z0-9._-]{0,254}$/;

/** Refuses a key that is not one plain file name (see SAFE_KEY); object storage keeps to the same keys. */
export function assertRecordingKey(key: string): void {
  if (!SAFE_KEY.test(key) || key.includes("..")) throw new InvalidOperationError(`"${key}" is not a valid recording key`);
}

/** Recordings as files in one folder (by default under DATA_DIR), written whole and atomically. */
export class FileRecordingStorage implements RecordingStorage {
  constructor(private readonly directory: string) {}

  async put(key: string, data: Buffer): Promise<void> {
    const file = this.fileOf(key);
    await mkdir(this.directory, { recursive: true });
    // A reader never sees half a file: the data goes to a temporary name first and is renamed into place.
    const temporary = path.join(this.directory, `.${randomUUID()}.tmp`);
    try {
      await writeFile(temporary, data);
      await rename(temporary, file);
    } catch (error) {
      await rm(temporary, { force: true });
      throw error;
    }
  }

  async size(key: string): Promise<number | undefined> {
    try {
      const stats = await stat(this.fileOf(key));
      return stats.isFile() ? stats.size : undefined;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw error;
    }
  }

  read(key: string, range?: ByteRange): NodeJS.ReadableStream {
    return createReadStream(this.fileOf(key), range ? { start: range.start, end: range.end } : {});
  }

  private fileOf(key: string): string {
    assertRecordingKey(key);
    return path.join(this.directory, key);
  }
}
