/**
 * The microphone's AudioWorklet, as source text: the widget loads it from a Blob URL, so that it runs on any page
 * without a second file to host. It resamples the context's rate to 16 kHz (a box average per output sample, then
 * nearest), converts to 16-bit integers and posts 100 ms chunks to the main thread.
 */
export const CAPTURE_WORKLET = `
class ParleyCapture extends AudioWorkletProcessor {
  constructor() {
    super();
    this.ratio = sampleRate / 16000;
    this.position = 0;
    this.chunk = new Int16Array(1600);
    this.filled = 0;
  }
  process(inputs) {
    const input = inputs[0] && inputs[0][0];
    if (!input) return true;
    while (this.position < input.length) {
      const start = Math.floor(this.position);
      const end = Math.min(input.length, Math.max(start + 1, Math.floor(this.position + this.ratio)));
      let sum = 0;
      for (let i = start; i < end; i++) sum += input[i];
      const value = Math.max(-1, Math.min(1, sum / (end - start)));
      this.chunk[this.filled++] = value < 0 ? value * 32768 : value * 32767;
      if (this.filled === this.chunk.length) {
        this.port.postMessage(this.chunk.buffer, [this.chunk.buffer]);
        this.chunk = new Int16Array(1600);
        this.filled = 0;
      }
      this.position += this.ratio;
    }
    this.position -= input.length;
    return true;
  }
}
registerProcessor("parley-capture", ParleyCapture);
`;

/** Plays the agent's 16 kHz PCM frames back to back; `clear` drops what is queued (barge-in). */
export class Playback {
  private next = 0;
  private readonly sources = new Set<AudioBufferSourceNode>();
  bytesReceived = 0;

  constructor(private readonly context: AudioContext) {}

  enqueue(bytes: ArrayBuffer): void {
    this.bytesReceived += bytes.byteLength;
    const view = new DataView(bytes);
    const count = Math.floor(bytes.byteLength / 2);
    if (count === 0) return;
    const buffer = this.context.createBuffer(1, count, 16000);
    const channel = buffer.getChannelData(0);
    for (let i = 0; i < count; i++) channel[i] = view.getInt16(i * 2, true) / 32768;
    const source = this.context.createBufferSource();
    source.buffer = buffer;
    source.connect(this.context.destination);
    // A little slack before the first frame of a turn absorbs network jitter.
    this.next = Math.max(this.next, this.context.currentTime + 0.06);
    source.start(this.next);
    this.next += buffer.duration;
    this.sources.add(source);
    source.onended = () => this.sources.delete(source);
  }

  clear(): void {
    for (const source of this.sources) source.stop();
    this.sources.clear();
    this.next = 0;
  }
}
