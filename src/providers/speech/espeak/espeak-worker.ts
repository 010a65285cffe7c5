import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { decodeWav, type PcmAudio } from "../audio.js";
import { speechTokens } from "../word-timing.js";

/** eSpeak NG writes 22.05 kHz; an empty text gets an empty clip at the same rate. */
const ESPEAK_SAMPLE_RATE = 22050;

/**
 * The worker's code, plain JavaScript evaluated by `new Worker(..., { eval: true })`, because a worker cannot load a
 * TypeScript file through the loader the main thread was started with.
 *
 * The package is eSpeak NG's command line compiled with Emscripten: creating an instance runs `main` once and the
 * instance cannot be called again (`callMain` is not exported). So the 18 MB WebAssembly module is compiled once and
 * instantiated afresh for each text (about 100 ms for a long sentence), through Emscripten's `instantiateWasm` hook.
 * The text goes in through a file rather than argv so that a text starting with "-" is not read as an option.
 * Jobs run one at a time, so at most one 32 MB instance is alive. Running `main` takes the thread for as long as
 * synthesis lasts, which is why this happens in a worker rather than on the event loop.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const { readFile } = require("node:fs/promises");

async function main() {
  const { default: ESpeakNg } = await import(workerData.moduleUrl);
  const wasm = await WebAssembly.compile(await readFile(new URL("espeak-ng.wasm", workerData.moduleUrl)));
  async function synthesize(text, args) {
    const messages = [];
    const instance = await ESpeakNg({
      arguments: [...args, "-w", "/out.wav", "-f", "/in.txt"],
      preRun: [(module) => module.FS.writeFile("/in.txt", text)],
      print: (line) => messages.push(line),
      printErr: (line) => messages.push(line),
      instantiateWasm: (imports, receive) => {
        WebAssembly.instantiate(wasm, imports).then(receive);
        return {};
      },
    });
    try {
      return instance.FS.readFile("/out.wav");
    } catch {
      throw new Error("eSpeak NG wrote no audio: " + messages.join(" "));
    }
  }
  await synthesize("ready", ["-v", "en-us"]);
  let queue = Promise.resolve();
  parentPort.on("message", ({ id, text, args }) => {
    queue = queue.then(() => synthesize(text, args)).then(
      (wav) => parentPort.postMessage({ id, wav }, [wav.buffer]),
      (error) => parentPort.postMessage({ id, error: String(error && error.message ? error.message : error) }),
    );
  });
  parentPort.postMessage({ ready: true });
}

main().catch((error) => parentPort.postMessage({ failed: String(error && error.stack ? error.stack : error) }));
`;

interface Job {
  resolve(wav: Uint8Array): void;
  reject(error: Error): void;
}

type WorkerMessage =
  | { kind: "ready" }
  | { kind: "failed"; message: string }
  | { kind: "done"; id: number; wav: Uint8Array }
  | { kind: "error"; id: number; message: string };

function parseMessage(message: unknown): WorkerMessage | undefined {
  if (typeof message !== "object" || message === null) return undefined;
  const fields = message as Record<string, unknown>;
  if (fields["ready"] === true) return { kind: "ready" };
  if (typeof fields["failed"] === "string") return { kind: "failed", message: fields["failed"] };
  const id = fields["id"];
  if (typeof id !== "number") return undefined;
  if (fields["wav"] instanceof Uint8Array) return { kind: "done", id, wav: fields["wav"] };
  return { kind: "error", id, message: String(fields["error"]) };
}

/**
 * eSpeak NG (GPL-3.0, an optional dependency) run in a worker thread. The worker is started on first use, kept for
 * later texts, does not keep the process alive while idle, and is started again if it dies.
 */
export class EspeakWorker {
  private worker: Worker | undefined;
  private starting: Promise<Worker> | undefined;
  private readonly jobs = new Map<number, Job>();
  private nextId = 1;

  private constructor(private readonly moduleUrl: string) {}

  /** A running worker, or undefined when the package is not installed or does not run here. */
  static async start(): Promise<EspeakWorker | undefined> {
    let moduleUrl: string;
    try {
      moduleUrl = pathToFileURL(createRequire(import.meta.url).resolve("espeak-ng")).href;
    } catch {
      return undefined;
    }
    const worker = new EspeakWorker(moduleUrl);
    try {
      await worker.ready();
      return worker;
    } catch {
      await worker.close();
      return undefined;
    }
  }

  /** The text spoken with eSpeak NG's command-line `arguments` (voice, pitch, speed), without word timings. */
  async speak(text: string, args: readonly string[]): Promise<PcmAudio> {
    if (speechTokens(text).length === 0) return { sampleRate: ESPEAK_SAMPLE_RATE, samples: new Int16Array(0) };
    const worker = await this.ready();
    const id = this.nextId++;
    const wav = await new Promise<Uint8Array>((resolve, reject) => {
      if (this.worker !== worker) {
        reject(new Error("the eSpeak NG worker stopped"));
        return;
      }
      this.jobs.set(id, { resolve, reject });
      this.updateRef();
      worker.postMessage({ id, text, args });
    });
    return decodeWav(wav);
  }

  async close(): Promise<void> {
    const worker = this.worker;
    this.stopped(new Error("the eSpeak NG worker was closed"));
    await worker?.terminate();
  }

  private ready(): Promise<Worker> {
    this.starting ??= new Promise<Worker>((resolve, reject) => {
      const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { moduleUrl: this.moduleUrl } });
      this.worker = worker;
      worker.on("message", (raw: unknown) => {
        const message = parseMessage(raw);
        if (message?.kind === "ready") {
          resolve(worker);
          this.updateRef();
        } else if (message?.kind === "failed") {
          reject(new Error(`eSpeak NG did not start: ${message.message}`));
          void this.close();
        } else if (message) {
          this.settle(message);
        }
      });
      worker.on("error", (error) => {
        if (this.worker === worker) this.stopped(error);
        reject(error);
      });
      worker.on("exit", (code) => {
        const error = new Error(`the eSpeak NG worker stopped (exit code ${code})`);
        if (this.worker === worker) this.stopped(error);
        reject(error);
      });
    });
    return this.starting;
  }

  private settle(message: Extract<WorkerMessage, { kind: "done" | "error" }>): void {
    const job = this.jobs.get(message.id);
    if (!job) return;
    this.jobs.delete(message.id);
    this.updateRef();
    if (message.kind === "done") job.resolve(message.wav);
    else job.reject(new Error(`eSpeak NG failed: ${message.message}`));
  }

  /** Fails what was waiting and forgets the worker, so that the next text starts a new one. */
  private stopped(error: Error): void {
    for (const job of this.jobs.values()) job.reject(error);
    this.jobs.clear();
    this.worker = undefined;
    this.starting = undefined;
  }

  /** Keeps the process alive while the worker starts or has work, and lets it exit while the worker is idle. */
  private updateRef(): void {
    if (!this.worker) return;
    if (this.jobs.size > 0) this.worker.ref();
    else this.worker.unref();
  }
}
