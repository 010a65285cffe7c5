/** Mono 16-bit PCM WAV: the one audio format Parley writes and the one eSpeak NG hands back. */

const HEADER_BYTES = 44;

export interface PcmAudio {
  sampleRate: number;
  samples: Int16Array;
}

/** A canonical 44-byte RIFF/WAVE header followed by little-endian samples. */
export function encodeWav(audio: PcmAudio): Buffer {
  const dataBytes = audio.samples.length * 2;
  const wav = Buffer.alloc(HEADER_BYTES + dataBytes);
  wav.write("RIFF", 0, "ascii");
  wav.writeUInt32LE(36 + dataBytes, 4);
  wav.write("WAVE", 8, "ascii");
  wav.write("fmt ", 12, "ascii");
  wav.writeUInt32LE(16, 16);
  wav.writeUInt16LE(1, 20);
  wav.writeUInt16LE(1, 22);
  wav.writeUInt32LE(audio.sampleRate, 24);
  wav.writeUInt32LE(audio.sampleRate * 2, 28);
  wav.writeUInt16LE(2, 32);
  wav.writeUInt16LE(16, 34);
  wav.write("data", 36, "ascii");
  wav.writeUInt32LE(dataBytes, 40);
  for (let i = 0; i < audio.samples.length; i++) wav.writeInt16LE(audio.samples[i] ?? 0, HEADER_BYTES + i * 2);
  return wav;
}

/**
 * Reads a mono 16-bit PCM WAV by walking its chunks. A data chunk whose declared size runs past the end of the file
 * (what a writer that could not seek back leaves, e.g. 0x7ffff000 or 0xffffffff) is read to the end of the file.
 */
export function decodeWav(bytes: Uint8Array): PcmAudio {
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (view.length < 12 || view.toString("ascii", 0, 4) !== "RIFF" || view.toString("ascii", 8, 12) !== "WAVE") {
    throw new Error("not a RIFF/WAVE file");
  }
  let sampleRate: number | undefined;
  let offset = 12;
  while (offset + 8 <= view.length) {
    const id = view.toString("ascii", offset, offset + 4);
    const size = view.readUInt32LE(offset + 4);
    const body = offset + 8;
    if (id === "fmt ") {
      const format = view.readUInt16LE(body);
      const channels = view.readUInt16LE(body + 2);
      const bits = view.readUInt16LE(body + 14);
      if (format !== 1 || channels !== 1 || bits !== 16) {
        throw new Error(`unsupported WAV format ${format}, ${channels} channels, ${bits} bits`);
      }
      sampleRate = view.readUInt32LE(body + 4);
    } else if (id === "data") {
      if (sampleRate === undefined) throw new Error("WAV data chunk before its fmt chunk");
      const end = Math.min(view.length, body + size);
      const samples = new Int16Array(Math.floor((end - body) / 2));
      for (let i = 0; i < samples.length; i++) samples[i] = view.readInt16LE(body + i * 2);
      return { sampleRate, samples };
    }
    offset = body + size + (size % 2);
  }
  throw new Error("WAV file has no data chunk");
}
