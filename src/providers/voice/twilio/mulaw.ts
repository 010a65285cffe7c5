/**
 * G.711 μ-law, the 8 kHz telephone encoding of Twilio's media streams: one byte per sample. A small codec of its
 * own, since Twilio's stream is the only μ-law Parley speaks (the speech pipeline works on 16-bit PCM).
 */

const bias = 0x84;
const clip = 32635;

const decodeTable = new Int16Array(256);
for (let byte = 0; byte < 256; byte++) {
  const value = ~byte & 0xff;
  const exponent = (value >> 4) & 0x07;
  const magnitude = (((value & 0x0f) << 3) + bias) << exponent;
  decodeTable[byte] = value & 0x80 ? bias - magnitude : magnitude - bias;
}

export function decodeMulaw(bytes: Uint8Array): Int16Array {
  const samples = new Int16Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) samples[i] = decodeTable[bytes[i]!]!;
  return samples;
}

function encodeSample(sample: number): number {
  const sign = sample < 0 ? 0x80 : 0;
  let magnitude = Math.min(clip, Math.abs(sample)) + bias;
  let exponent = 7;
  for (let mask = 0x4000; (magnitude & mask) === 0 && exponent > 0; mask >>= 1) exponent--;
  const mantissa = (magnitude >> (exponent + 3)) & 0x0f;
  magnitude = sign | (exponent << 4) | mantissa;
  return ~magnitude & 0xff;
}

export function encodeMulaw(samples: Int16Array): Uint8Array {
  const bytes = new Uint8Array(samples.length);
  for (let i = 0; i < samples.length; i++) bytes[i] = encodeSample(samples[i]!);
  return bytes;
}
