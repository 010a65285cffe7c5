import { randomFillSync } from "node:crypto";

/** Random bytes drawn from the system in 4 KiB batches: a draw per id was a system call per message. */
const pool = Buffer.alloc(4096);
let offset = pool.length;

function random16(): Buffer {
  if (offset + 16 > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const bytes = Buffer.from(pool.subarray(offset, offset + 16));
  offset += 16;
  return bytes;
}

/** UUIDv7 (RFC 9562): time-ordered, so ids sort roughly by creation and index well. */
export function uuidv7(now: number = Date.now()): string {
  const bytes = random16();
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString("hex");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
