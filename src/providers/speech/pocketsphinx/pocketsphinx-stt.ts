import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { constants } from "node:fs";
import { access, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { pcmToBytes } from "../audio.js";
import { SpeechUnavailableError } from "../errors.js";
import type { SpeechToText } from "../stt.js";

const BATCH_PROGRAM = "pocketsphinx_batch";
const MODEL_ROOT = "/usr/share/pocketsphinx/model";

/** The model folder of a language tag (`en-US` → `/usr/share/pocketsphinx/model/en-us`), as Debian lays it out. */
function modelFiles(language: string): { hmm: string; lm: string; dict: string } {
  const tag = language.toLowerCase();
  const root = path.join(MODEL_ROOT, tag);
  return { hmm: path.join(root, tag), lm: path.join(root, `${tag}.lm.bin`), dict: path.join(root, `cmudict-${tag}.dict`) };
}

async function onPath(program: string): Promise<boolean> {
  for (const dir of (process.env["PATH"] ?? "").split(path.delimiter)) {
    if (dir === "") continue;
    try {
      await access(path.join(dir, program), constants.X_OK);
      return true;
    } catch {
      // not in this folder
    }
  }
  return false;
}

/** Throws SpeechUnavailableError naming what is missing: Debian's `pocketsphinx` program or the language's model. */
export async function checkPocketsphinx(language: string, program: string = BATCH_PROGRAM): Promise<void> {
  if (!(await onPath(program))) {
    throw new SpeechUnavailableError("stt", `pocketsphinx is not installed (no ${program} on PATH): apt-get install pocketsphinx pocketsphinx-en-us`);
  }
  const files = modelFiles(language);
  for (const file of [files.hmm, files.lm, files.dict]) {
    try {
      await access(file, constants.R_OK);
    } catch {
      throw new SpeechUnavailableError("stt", `no pocketsphinx model for ${language} (${file} is missing): apt-get install pocketsphinx-en-us`);
    }
  }
}

interface Pending {
  id: string;
  resolve(text: string): void;
  reject(error: Error): void;
}

/**
 * One long-lived `pocketsphinx_batch` process: the model loads once (about a second, ~100 MB), then each utterance
 * is a raw 16 kHz file in the decoder's folder whose name goes in as a line of the control file, and its hypothesis
 * comes back as a line `words (id score)`. The control file and the hypothesis file are the process's stdin and
 * stdout behind `cat`, because Node hands a child sockets, which pocketsphinx cannot open by name as /dev/stdin.
 * Utterances are decoded one at a time in order.
 */
class BatchDecoder {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly queue: Pending[] = [];
  private next = 0;
  private failure: Error | undefined;

  private constructor(
    private readonly folder: string,
    language: string,
    program: string,
    onExit: () => void,
  ) {
    const files = modelFiles(language);
    const args = ["-adcin", "yes", "-samprate", "16000", "-cepdir", folder, "-cepext", ".raw", "-hmm", files.hmm, "-lm", files.lm, "-dict", files.dict, "-logfn", "/dev/null", "-ctl", "/dev/stdin", "-hyp", "/dev/stdout"];
    this.child = spawn("sh", ["-c", `cat | exec ${program} "$@" | cat`, "sh", ...args], { stdio: ["pipe", "pipe", "pipe"] });
    this.child.stderr.resume();
    createInterface({ input: this.child.stdout }).on("line", (line) => this.heard(line));
    this.child.on("error", (error) => this.fail(error));
    this.child.on("exit", (code) => {
      this.fail(new Error(`pocketsphinx stopped (exit code ${code})`));
      onExit();
    });
    this.child.stdin.on("error", (error) => this.fail(error));
  }

  static async start(language: string, program: string, onExit: () => void): Promise<BatchDecoder> {
    return new BatchDecoder(await mkdtemp(path.join(tmpdir(), "parley-pocketsphinx-")), language, program, onExit);
  }

  get load(): number {
    return this.queue.length;
  }

  async decode(samples: Int16Array): Promise<string> {
    if (this.failure) throw this.failure;
    const id = `u${this.next++}`;
    await writeFile(path.join(this.folder, `${id}.raw`), pcmToBytes(samples));
    try {
      return await new Promise<string>((resolve, reject) => {
        this.queue.push({ id, resolve, reject });
        this.child.stdin.write(`${id}\n`);
      });
    } finally {
      await rm(path.join(this.folder, `${id}.raw`), { force: true });
    }
  }

  close(): void {
    this.child.stdin.end();
    this.child.kill();
    void rm(this.folder, { recursive: true, force: true });
  }

  private heard(line: string): void {
    const match = /^(.*?) ?\((\S+) -?\d+\)$/.exec(line);
    if (!match) return;
    const index = this.queue.findIndex((pending) => pending.id === match[2]);
    if (index < 0) return;
    const [pending] = this.queue.splice(index, 1);
    pending?.resolve((match[1] ?? "").trim());
  }

  private fail(error: Error): void {
    this.failure ??= error;
    for (const pending of this.queue.splice(0)) pending.reject(error);
  }
}

/**
 * CMU PocketSphinx from Debian (`pocketsphinx`, `pocketsphinx-en-us`): offline, a few hundred milliseconds a turn on
 * one core. A small pool of decoder processes, each turn to the least busy one; a decoder that dies is replaced.
 */
export class PocketsphinxStt implements SpeechToText {
  readonly name = "pocketsphinx";
  private readonly decoders: (Promise<BatchDecoder> | undefined)[];

  constructor(
    private readonly language: string = "en-US",
    poolSize = 2,
    /** The decoder program; Debian's by default. */
    private readonly program: string = BATCH_PROGRAM,
  ) {
    this.decoders = Array.from({ length: Math.max(1, poolSize) }, () => undefined);
  }

  async transcribe(samples: Int16Array, signal?: AbortSignal): Promise<string> {
    signal?.throwIfAborted();
    const decoder = await this.leastBusy();
    return decoder.decode(samples);
  }

  /** Loads the model ahead of the first turn, so that it does not pay the start-up. */
  async warm(): Promise<void> {
    await Promise.all(this.decoders.map((_, index) => this.decoder(index)));
  }

  close(): void {
    for (const [index, decoder] of this.decoders.entries()) {
      this.decoders[index] = undefined;
      void decoder?.then((started) => started.close()).catch(() => undefined);
    }
  }

  private async leastBusy(): Promise<BatchDecoder> {
    const started = await Promise.all(this.decoders.map((_, index) => this.decoder(index)));
    return started.reduce((best, candidate) => (candidate.load < best.load ? candidate : best));
  }

  private decoder(index: number): Promise<BatchDecoder> {
    let decoder = this.decoders[index];
    if (!decoder) {
      decoder = checkPocketsphinx(this.language, this.program).then(() =>
        BatchDecoder.start(this.language, this.program, () => {
          if (this.decoders[index] === decoder) this.decoders[index] = undefined;
        }),
      );
      decoder.catch(() => {
        if (this.decoders[index] === decoder) this.decoders[index] = undefined;
      });
      this.decoders[index] = decoder;
    }
    return decoder;
  }
}
