/**
 * G.711 μ-law, the encoding of telephony audio (Twilio media streams: 8 kHz, one byte per sample). The classic
 * Sun/CCITT reference algorithm: a sign bit, a 3-bit segment (exponent) and a 4-bit mantissa, all bits inverted.
 */

const BIAS = 0x84;
const CLIP = 32635;

export function encodeMuLawSample(sample: number): number {
  let value = Math.max(-32768, Math.min(32767, Math.round(sample)));
  const sign = value < 0 ? 0x80 : 0;
  if (sign) value = -value;
  if (value > CLIP) value = CLIP;
  value += BIAS;
  let exponent = 7;
  for (let mask = 0x4000; (value & mask) === 0 && exponent > 0; mask >>= 1) exponent--;
  const mantissa = (value >> (exponent + 3)) & 0x0f;
  return ~(sign | (exponent << 4) | mantissa) & 0xff;
}

export function decodeMuLawSample(byte: number): number {
  const inverted = ~byte & 0xff;
  const sign = inverted & 0x80;
  const exponent = (inverted >> 4) & 0x07;
  const mantissa = inverted & 0x0f;
  const magnitude = (((mantissa << 3) + BIAS) << exponent) - BIAS;
  return sign ? -magnitude : magnitude;
}

export function encodeMuLaw(samples: Int16Array): Uint8Array {
  const out = new Uint8Array(samples.length);
  for (let i = 0; i < samples.length; i++) out[i] = encodeMuLawSample(samples[i] ?? 0);
  return out;
}

export function decodeMuLaw(bytes: Uint8Array): Int16Array {
  const out = new Int16Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) out[i] = decodeMuLawSample(bytes[i] ?? 0xff);
  return out;
}
