import { spawn, type ChildProcessByStdio } from "node:child_process";
import { constants } from "node:fs";
import { access, readFile, rm } from "node:fs/promises";
import type { Socket } from "node:net";
import path from "node:path";
import type { Readable, Writable } from "node:stream";
import type { FliteVoice } from "../../../domain/projects/project-config.js";
import { decodeWav } from "../audio.js";
import { SpeechUnavailableError } from "../errors.js";
import type { SpokenText, TextToSpeech } from "../tts.js";
import { alignWords, speechTokens } from "../word-timing.js";

const PROGRAM = "flite";

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

/**
 * The launcher's script: one request a line (`id voice text`), each spoken by a flite run of its own in the
 * background into `id.wav` in the launcher's folder, and answered by a line `id status` once written. The folder
 * goes with the launcher, which ends when the server's end of its input closes.
 */
const LAUNCHER = `dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
echo "$dir"
while read -r id voice text; do
  { ${PROGRAM} -voice "$voice" -t "$text" -o "$dir/$id.wav" 2>/dev/null; echo "$id $?"; } &
done`;

/** The shell's status for a program it cannot find. */
const NOT_FOUND = 127;

interface Request {
  resolve(status: number): void;
  reject(error: Error): void;
}

type Shell = ChildProcessByStdio<Writable, Readable, null>;

/**
 * Starts flite runs through one long-lived shell. Node starts a program by forking its own process, which copies
 * the page tables of a server holding hundreds of megabytes (decoders, database) while the event loop waits: ~27 ms
 * a run at 560 MB here, for every sentence of every call. The shell is forked once, and its own forks are small.
 */
class FliteLauncher {
  private running: { shell: Shell; folder: Promise<string> } | undefined;
  private readonly pending = new Map<number, Request>();
  private nextId = 0;
  /** Sentences being spoken. */
  private active = 0;

  async speak(voice: string, text: string, signal?: AbortSignal): Promise<Buffer> {
    const { shell, folder } = this.start();
    this.hold(shell, ++this.active > 0);
    try {
      const dir = await folder;
      signal?.throwIfAborted();
      const id = this.nextId++;
      const status = new Promise<number>((resolve, reject) => this.pending.set(id, { resolve, reject }));
      // One request a line: the words are all that could break one.
      shell.stdin.write(`${id} ${voice} ${text.replace(/[\r\n\0]/g, " ")}\n`);
      const file = path.join(dir, `${id}.wav`);
      try {
        const code = await status;
        if (code === NOT_FOUND) throw unavailable();
        if (code !== 0) throw new Error(`flite failed (status ${code}) on: ${text}`);
        signal?.throwIfAborted();
        return await readFile(file);
      } finally {
        await rm(file, { force: true });
      }
    } finally {
      this.hold(shell, --this.active > 0);
    }
  }

  private start(): { shell: Shell; folder: Promise<string> } {
    if (this.running) return this.running;
    const shell = spawn("sh", ["-c", LAUNCHER], { stdio: ["pipe", "pipe", "ignore"] });
    let announced: { resolve(dir: string): void; reject(error: Error): void } | undefined;
    const folder = new Promise<string>((resolve, reject) => (announced = { resolve, reject }));
    // Only the speaking requests wait on it; a launcher that fails before them rejects it with nobody listening.
    folder.catch(() => undefined);
    let lines = "";
    shell.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      lines += chunk;
      let end: number;
      while ((end = lines.indexOf("\n")) >= 0) {
        const line = lines.slice(0, end);
        lines = lines.slice(end + 1);
        if (announced) announced.resolve(line);
        else this.answered(line);
        announced = undefined;
      }
    });
    const lost = (error: Error) => {
      announced?.reject(error);
      if (this.running?.shell !== shell) return;
      this.running = undefined;
      for (const request of this.pending.values()) request.reject(error);
      this.pending.clear();
    };
    shell.on("error", lost);
    shell.on("exit", (code) => lost(new Error(`flite's launcher ended (status ${String(code)})`)));
    shell.stdin.on("error", () => undefined);
    this.running = { shell, folder };
    return this.running;
  }

  private answered(line: string): void {
    const [id = "", status = ""] = line.split(" ");
    const request = this.pending.get(Number(id));
    this.pending.delete(Number(id));
    request?.resolve(Number(status));
  }

  /** The launcher keeps the process alive only while a sentence is being spoken. */
  private hold(shell: Shell, held: boolean): void {
    // A child's pipes are sockets, which can be unreferenced.
    for (const handle of [shell, shell.stdin as Socket, shell.stdout as Socket]) {
      if (held) handle.ref();
      else handle.unref();
    }
  }
}

const launcher = new FliteLauncher();

/**
 * Flite as a TextToSpeech: Debian's `flite` program, one run per sentence, its WAV read from a file the run writes.
 * A run starts in milliseconds (the voices are compiled into the program), which is why a long-lived engine is not
 * needed; flite's library was tried in this process through an FFI and crashed the process when it synthesized while
 * pocketsphinx decoded on another thread, so it runs in a process of its own, started by one launcher per server.
 */
export class FliteTts implements TextToSpeech {
  readonly name = "flite";

  constructor(
    private readonly voice: FliteVoice,
    private readonly options: { wordTimings?: boolean } = {},
  ) {}

  async synthesize(text: string, signal?: AbortSignal): Promise<SpokenText> {
    signal?.throwIfAborted();
    const audio = decodeWav(await launcher.speak(this.voice, text, signal));
    return this.options.wordTimings ? { ...audio, words: alignWords(audio, speechTokens(text)) } : audio;
  }

  /** Throws SpeechUnavailableError when Debian's flite is not installed. */
  async check(): Promise<void> {
    if (!(await onPath(PROGRAM))) throw unavailable();
  }
}

function unavailable(): SpeechUnavailableError {
  return new SpeechUnavailableError("tts", "flite is not installed: apt-get install flite");
}
