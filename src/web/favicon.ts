import { deflateSync } from "node:zlib";

const size = 32;

/** CRC-32 (ISO-HDLC), which every PNG chunk ends with. */
function crc32(bytes: Buffer): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ 0xedb88320 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, "ascii"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** Whether pixel (x, y) is inside the mark: a white speech bubble (a rounded box with a tail) on the console's blue. */
function inBubble(x: number, y: number): boolean {
  const box = x >= 7 && x <= 24 && y >= 8 && y <= 20;
  const corner = (cx: number, cy: number) => (x - cx) ** 2 + (y - cy) ** 2 > 9;
  if (box && ((x < 10 && y < 11 && corner(10, 11)) || (x > 21 && y < 11 && corner(21, 11)) || (x < 10 && y > 17 && corner(10, 17)) || (x > 21 && y > 17 && corner(21, 17)))) return false;
  const tail = y > 20 && y <= 25 && x >= 10 && x <= 10 + (25 - y);
  return box || tail;
}

function inRoundedSquare(x: number, y: number): boolean {
  const radius = 7;
  const cx = Math.min(Math.max(x, radius), size - 1 - radius);
  const cy = Math.min(Math.max(y, radius), size - 1 - radius);
  return (x - cx) ** 2 + (y - cy) ** 2 <= radius ** 2;
}

function png(): Buffer {
  const rows: Buffer[] = [];
  for (let y = 0; y < size; y++) {
    const row = Buffer.alloc(1 + size * 4);
    for (let x = 0; x < size; x++) {
      const pixel = !inRoundedSquare(x, y) ? [0, 0, 0, 0] : inBubble(x, y) ? [255, 255, 255, 255] : [0x0a, 0x53, 0xbe, 255];
      row.set(pixel, 1 + x * 4);
    }
    rows.push(row);
  }
  const header = Buffer.alloc(13);
  header.writeUInt32BE(size, 0);
  header.writeUInt32BE(size, 4);
  header.set([8, 6, 0, 0, 0], 8); // 8 bits per channel, RGBA, deflate, no filter, no interlace
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(Buffer.concat(rows))),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

/** Parley's icon as an ICO file holding one 32×32 PNG (every browser reads PNG inside ICO), drawn here in code. */
export function favicon(): Buffer {
  const image = png();
  const header = Buffer.alloc(6 + 16);
  header.writeUInt16LE(0, 0);
  header.writeUInt16LE(1, 2); // an icon
  header.writeUInt16LE(1, 4); // one image
  header.set([size, size, 0, 0], 6);
  header.writeUInt16LE(1, 10); // colour planes
  header.writeUInt16LE(32, 12); // bits per pixel
  header.writeUInt32LE(image.length, 14);
  header.writeUInt32LE(header.length, 18);
  return Buffer.concat([header, image]);
}
