import { execFile } from "node:child_process";
import { constants } from "node:fs";
import { access } from "node:fs/promises";
import path from "node:path";
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
 * Flite as a TextToSpeech: Debian's `flite` program, one run per sentence, its WAV read from its standard output.
 * A run starts in milliseconds (the voices are compiled into the program), which is why a long-lived engine is not
 * needed; flite's library was tried in this process through an FFI and crashed the process when it synthesized while
 * pocketsphinx decoded on another thread, so it runs in a process of its own.
 */
export class FliteTts implements TextToSpeech {
  readonly name = "flite";

  constructor(
    private readonly voice: FliteVoice,
    private readonly options: { wordTimings?: boolean } = {},
  ) {}

  async synthesize(text: string, signal?: AbortSignal): Promise<SpokenText> {
    signal?.throwIfAborted();
    const wav = await new Promise<Buffer>((resolve, reject) => {
      // flite opens its output by name; Node's pipes are sockets, which /dev/stdout cannot open, so a shell pipe is between.
      const args = ["-c", `${PROGRAM} "$@" -o /dev/stdout | cat`, "sh", "-voice", this.voice, "-t", text];
      execFile("sh", args, { encoding: "buffer", maxBuffer: 64 << 20, ...(signal ? { signal } : {}) }, (error, stdout) => {
        if (error) reject(error);
        else if (stdout.length === 0) reject(unavailable());
        else resolve(stdout);
      });
    });
    const audio = decodeWav(wav);
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
