/**
 * The microphone's AudioWorklet, as source text: the widget loads it from a Blob URL, so that it runs on any page
 * without a second file to host. It low-passes and resamples the context's rate to 16 kHz, converts to 16-bit
 * integers and posts 100 ms chunks to the main thread.
 */
export const CAPTURE_WORKLET = `
class ParleyCapture extends AudioWorkletProcessor {
  constructor() {
    super();
    this.ratio = sampleRate / 16000;
    // A Hamming-windowed sinc low-pass at 7.2 kHz, so that nothing above 8 kHz folds into the speech band.
    const taps = 31, cutoff = 7200 / sampleRate, middle = (taps - 1) / 2;
    this.kernel = new Float32Array(taps);
    let sum = 0;
    for (let i = 0; i < taps; i++) {
      const x = i - middle;
      const sinc = x === 0 ? 2 * cutoff : Math.sin(2 * Math.PI * cutoff * x) / (Math.PI * x);
      this.kernel[i] = sinc * (0.54 - 0.46 * Math.cos((2 * Math.PI * i) / (taps - 1)));
      sum += this.kernel[i];
    }
    for (let i = 0; i < taps; i++) this.kernel[i] /= sum;
    this.history = new Float32Array(taps);
    this.next = 0;
    this.count = 0;
    this.chunk = new Int16Array(1600);
    this.filled = 0;
  }
  process(inputs) {
    const input = inputs[0] && inputs[0][0];
    if (!input) return true;
    const taps = this.kernel.length;
    for (let n = 0; n < input.length; n++) {
      this.history.copyWithin(0, 1);
      this.history[taps - 1] = input[n];
      this.count++;
      if (this.count < this.next) continue;
      this.next += this.ratio;
      let value = 0;
      for (let k = 0; k < taps; k++) value += this.kernel[k] * this.history[k];
      value = Math.max(-1, Math.min(1, value));
      this.chunk[this.filled++] = value < 0 ? value * 32768 : value * 32767;
      if (this.filled === this.chunk.length) {
        this.port.postMessage(this.chunk.buffer, [this.chunk.buffer]);
        this.chunk = new Int16Array(1600);
        this.filled = 0;
      }
    }
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

/** A call's audio as the browser holds it: the call's socket and the microphone flowing into the capture worklet. */
export interface CallAudio {
  socket: WebSocket;
  microphone: MediaStream;
  source: MediaStreamAudioSourceNode;
  capture: AudioWorkletNode;
}

/**
 * Opens the call's socket, then the microphone into the capture worklet (registered on `context` as
 * "parley-capture"): the microphone opens once the call is there to hear it, so that nothing said before is lost.
 */
export async function openCallAudio(context: AudioContext, url: string): Promise<CallAudio> {
  const socket = new WebSocket(url);
  socket.binaryType = "arraybuffer";
  try {
    await new Promise((resolve, reject) => {
      socket.onopen = resolve;
      socket.onclose = () => reject(new Error("the call's socket closed"));
    });
    const microphone = await navigator.mediaDevices.getUserMedia({ audio: { echoCancellation: true, noiseSuppression: false, autoGainControl: false, channelCount: 1 } });
    const capture = new AudioWorkletNode(context, "parley-capture");
    const source = context.createMediaStreamSource(microphone);
    source.connect(capture);
    return { socket, microphone, source, capture };
  } catch (error) {
    socket.close();
    throw error;
  }
}
