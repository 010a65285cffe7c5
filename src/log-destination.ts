import pino from "pino";

type SyncDestination = ReturnType<typeof pino.destination>;

/**
 * Where the server's log lines go: standard output, in one synchronous write per turn of the event loop rather than
 * one per line. Under load a turn handles many requests, and a write per request line was a system call (and a
 * wake-up of whoever reads the output) per request. A line waits at most until the end of the current turn; lines
 * still gathered when the process exits are written then. Asynchronous writes were measured slower: each went
 * through libuv's thread pool.
 */
export class TurnBufferedStdout {
  private readonly output: SyncDestination = pino.destination({ dest: 1, sync: true });
  private lines: string[] = [];
  private readonly flushOnExit = () => this.flush();

  constructor() {
    process.once("exit", this.flushOnExit);
  }

  write(line: string): void {
    if (this.lines.push(line) === 1) setImmediate(() => this.flush());
  }

  flush(): void {
    if (this.lines.length === 0) return;
    const text = this.lines.join("");
    this.lines = [];
    this.output.write(text);
  }

  close(): void {
    this.flush();
    process.off("exit", this.flushOnExit);
  }
}
