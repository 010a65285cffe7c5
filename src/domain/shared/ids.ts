import { randomFillSync } from "node:crypto";

/** Random bytes drawn from the system in 4 KiB batches: a draw per id was a system call per message. */
const pool = Buffer.alloc(4096);
let offset = pool.length;

/** The two hex digits of each byte value, as character codes. */
const hexDigits = Buffer.from(Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0")).join(""), "latin1");
/**
 * An id's 36 characters are written here and read back as one string: formatted piece by piece (hex, slices, the
 * template), an id made a string per piece and more than six times its own size in garbage.
 */
const text = Buffer.alloc(36);

/** Where the next 16 random bytes of the pool start; no other id gets them. */
function takeRandom16(): number {
  if (offset + 16 > pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const start = offset;
  offset += 16;
  return start;
}

/** The 16 bytes at `start` of the pool in the 8-4-4-4-12 form. */
function formatted(start: number): string {
  let at = 0;
  for (let index = 0; index < 16; index++) {
    if (index === 4 || index === 6 || index === 8 || index === 10) text[at++] = 0x2d;
    const byte = pool[start + index]!;
    text[at++] = hexDigits[byte * 2]!;
    text[at++] = hexDigits[byte * 2 + 1]!;
  }
  return text.toString("latin1", 0, 36);
}

/** The millisecond of the last UUIDv7 made, and the count in its 12 bits after the time. */
let lastMillisecond = -1;
let sequence = 0;

/**
 * UUIDv7 (RFC 9562): time-ordered, so ids sort by creation and index well. Ids made in one millisecond count up in
 * the 12 bits after the time (the RFC's method 1), from a random start below 2,048, so that this process's ids sort in
 * the order they were made, as keyset pages ordered by id expect.
 */
export function uuidv7(now: number = Date.now()): string {
  const start = takeRandom16();
  if (now === lastMillisecond && sequence < 0xfff) sequence += 1;
  else {
    lastMillisecond = now;
    sequence = ((pool[start + 6]! & 0x07) << 8) | pool[start + 7]!;
  }
  pool.writeUIntBE(now, start, 6);
  pool[start + 6] = 0x70 | (sequence >> 8);
  pool[start + 7] = sequence & 0xff;
  pool[start + 8] = (pool[start + 8]! & 0x3f) | 0x80;
  return formatted(start);
}

/** UUIDv4 (RFC 9562), random, as crypto.randomUUID makes it, with less garbage per id. */
export function uuidv4(): string {
  const start = takeRandom16();
  pool[start + 6] = (pool[start + 6]! & 0x0f) | 0x40;
  pool[start + 8] = (pool[start + 8]! & 0x3f) | 0x80;
  return formatted(start);
}
