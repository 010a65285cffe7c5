/**
 * Audio as the speech pipeline carries it: mono 16-bit PCM. Inside Parley every stage works at 16 kHz (what the
 * browser sends, what pocketsphinx and the VAD take); transports convert at their edge (8 kHz μ-law for telephony).
 */

export const PIPELINE_SAMPLE_RATE = 16_000;
/** 20 ms: a frame size that WebRTC VAD accepts and small enough for barge-in to feel immediate. */
export const FRAME_MS = 20;
export const FRAME_SAMPLES = (PIPELINE_SAMPLE_RATE * FRAME_MS) / 1000;

export interface PcmAudio {
  sampleRate: number;
  samples: Int16Array;
}

export function durationMs(audio: PcmAudio): number {
  return (audio.samples.length * 1000) / audio.sampleRate;
}

/** Little-endian 16-bit samples from bytes (a WebSocket frame); a trailing odd byte is dropped. */
export function pcmFromBytes(bytes: Uint8Array): Int16Array {
  const count = Math.floor(bytes.byteLength / 2);
  const view = new DataView(bytes.buffer, bytes.byteOffset, count * 2);
  const samples = new Int16Array(count);
  for (let i = 0; i < count; i++) samples[i] = view.getInt16(i * 2, true);
  return samples;
}

export function pcmToBytes(samples: Int16Array): Buffer {
  const bytes = Buffer.alloc(samples.length * 2);
  for (let i = 0; i < samples.length; i++) bytes.writeInt16LE(samples[i] ?? 0, i * 2);
  return bytes;
}

function clamp16(value: number): number {
  return value > 32767 ? 32767 : value < -32768 ? -32768 : Math.round(value);
}

/** Taps of the low-pass filter applied before downsampling: a Hamming-windowed sinc. */
const LOW_PASS_TAPS = 31;
const lowPassKernels = new Map<string, Float64Array>();

function lowPassKernel(cutoff: number): Float64Array {
  const key = cutoff.toFixed(6);
  let kernel = lowPassKernels.get(key);
  if (!kernel) {
    kernel = new Float64Array(LOW_PASS_TAPS);
    const middle = (LOW_PASS_TAPS - 1) / 2;
    let sum = 0;
    for (let i = 0; i < LOW_PASS_TAPS; i++) {
      const x = i - middle;
      const sinc = x === 0 ? 2 * cutoff : Math.sin(2 * Math.PI * cutoff * x) / (Math.PI * x);
      kernel[i] = sinc * (0.54 - 0.46 * Math.cos((2 * Math.PI * i) / (LOW_PASS_TAPS - 1)));
      sum += kernel[i] ?? 0;
    }
    for (let i = 0; i < LOW_PASS_TAPS; i++) kernel[i] = (kernel[i] ?? 0) / sum;
    lowPassKernels.set(key, kernel);
  }
  return kernel;
}

/**
 * Converts between sample rates. Downsampling first removes what the new rate cannot carry (a windowed-sinc
 * low-pass at 90 % of the new Nyquist frequency), since speech folded back from 4–8 kHz into a telephone channel,
 * or from 8–11 kHz into the recognizer's 16 kHz, garbles it. Both directions then interpolate linearly, which keeps
 * the duration exact.
 */
export function resample(samples: Int16Array, from: number, to: number): Int16Array {
  if (from === to || samples.length === 0) return samples;
  let source: ArrayLike<number> = samples;
  if (to < from) {
    const kernel = lowPassKernel((0.9 * to) / 2 / from);
    const half = (kernel.length - 1) / 2;
    const filtered = new Float64Array(samples.length);
    for (let i = 0; i < samples.length; i++) {
      let acc = 0;
      for (let k = 0; k < kernel.length; k++) acc += (kernel[k] ?? 0) * (samples[i + k - half] ?? 0);
      filtered[i] = acc;
    }
    source = filtered;
  }
  const out = new Int16Array(Math.round((samples.length * to) / from));
  for (let i = 0; i < out.length; i++) {
    const position = (i * from) / to;
    const left = Math.floor(position);
    const a = source[left] ?? 0;
    const b = source[left + 1] ?? a;
    out[i] = clamp16(a + (b - a) * (position - left));
  }
  return out;
}

/**
 * A stream's rate conversion by a whole factor (16 kHz ↔ 8 kHz for telephony), frame by frame. The low-pass filter
 * and the interpolation carry the previous frame's end into the next, so that frame edges make no clicks; resample()
 * treats each call on its own, which is right for a whole clip only. The filter is causal: a delay of 15 samples.
 */
export class StreamResampler {
  private readonly factor: number;
  private readonly kernel: Float64Array | undefined;
  private history: Float64Array;
  /** Downsampling: where the next output sample falls in the next frame. */
  private phase = 0;
  /** Upsampling: the last sample of the previous frame. */
  private previous = 0;

  constructor(private readonly from: number, private readonly to: number) {
    const factor = from > to ? from / to : to / from;
    if (!Number.isInteger(factor)) throw new RangeError(`${from} → ${to} Hz is not a whole factor`);
    this.factor = factor;
    this.kernel = from > to ? lowPassKernel((0.9 * to) / 2 / from) : undefined;
    this.history = new Float64Array(this.kernel ? this.kernel.length - 1 : 0);
  }

  push(frame: Int16Array): Int16Array {
    if (this.from === this.to) return frame;
    return this.kernel ? this.down(frame, this.kernel) : this.up(frame);
  }

  private down(frame: Int16Array, kernel: Float64Array): Int16Array {
    const input = new Float64Array(this.history.length + frame.length);
    input.set(this.history);
    input.set(frame, this.history.length);
    const out: number[] = [];
    let n = this.phase;
    for (; n < frame.length; n += this.factor) {
      const newest = this.history.length + n;
      let acc = 0;
      for (let k = 0; k < kernel.length; k++) acc += (kernel[k] ?? 0) * (input[newest - k] ?? 0);
      out.push(clamp16(acc));
    }
    this.phase = n - frame.length;
    this.history = input.slice(input.length - this.history.length);
    return Int16Array.from(out);
  }

  private up(frame: Int16Array): Int16Array {
    const out = new Int16Array(frame.length * this.factor);
    for (let i = 0; i < frame.length; i++) {
      const current = frame[i] ?? 0;
      for (let j = 1; j <= this.factor; j++) out[i * this.factor + j - 1] = clamp16(this.previous + ((current - this.previous) * j) / this.factor);
      this.previous = current;
    }
    return out;
  }
}

export function toPipelineRate(audio: PcmAudio): Int16Array {
  return resample(audio.samples, audio.sampleRate, PIPELINE_SAMPLE_RATE);
}

/** Cuts samples into frames of `size`, the last one padded with silence. */
export function* framesOf(samples: Int16Array, size: number = FRAME_SAMPLES): Generator<Int16Array> {
  for (let start = 0; start < samples.length; start += size) {
    const frame = samples.subarray(start, start + size);
    if (frame.length === size) yield frame;
    else {
      const padded = new Int16Array(size);
      padded.set(frame);
      yield padded;
    }
  }
}

/** The parts one after the other, as one run of samples. */
export function concatSamples(...parts: Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((total, part) => total + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/** Adds `clip` into `track` at `offset`, saturating: how two voices that overlap in time end up in one recording. */
export function mixInto(track: Int16Array, clip: Int16Array, offset: number): void {
  for (let i = 0; i < clip.length && offset + i < track.length; i++) {
    if (offset + i < 0) continue;
    track[offset + i] = clamp16((track[offset + i] ?? 0) + (clip[i] ?? 0));
  }
}

/** WAV files are mono 16-bit PCM: the one audio format Parley writes and the one eSpeak NG hands back. */
const WAV_HEADER_BYTES = 44;

/** A canonical 44-byte RIFF/WAVE header followed by little-endian samples. */
export function encodeWav(audio: PcmAudio): Buffer {
  const dataBytes = audio.samples.length * 2;
  const wav = Buffer.alloc(WAV_HEADER_BYTES + dataBytes);
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
  for (let i = 0; i < audio.samples.length; i++) wav.writeInt16LE(audio.samples[i] ?? 0, WAV_HEADER_BYTES + i * 2);
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
