import { execFile } from "node:child_process";
import { chmod, mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { freePort } from "./processes.js";

const run = promisify(execFile);

/**
 * A PostgreSQL cluster of its own, in a temporary folder, that a fault test may stop and start without disturbing
 * the shared server. PostgreSQL refuses to run as root, so the cluster belongs to the `postgres` user.
 */
export class TemporaryPostgres {
  private constructor(
    private readonly bin: string,
    private readonly dir: string,
    readonly port: number,
  ) {}

  static async create(): Promise<TemporaryPostgres> {
    const { stdout } = await run("bash", ["-c", "ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1"]);
    const bin = stdout.trim();
    const dir = await mkdtemp(path.join(tmpdir(), "parley-pg-"));
    await chmod(dir, 0o777);
    const cluster = new TemporaryPostgres(bin, dir, await freePort());
    await cluster.asPostgres(`${bin}/initdb`, ["-D", `${dir}/data`, "-U", "postgres", "--auth=trust", "-E", "UTF8"]);
    await cluster.start();
    return cluster;
  }

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  async start(): Promise<void> {
    await this.asPostgres(`${this.bin}/pg_ctl`, [
      "-D",
      `${this.dir}/data`,
      "-l",
      `${this.dir}/log`,
      "-o",
      `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1`,
      "-w",
      "start",
    ]);
  }

  async stop(): Promise<void> {
    await this.asPostgres(`${this.bin}/pg_ctl`, ["-D", `${this.dir}/data`, "-m", "fast", "-w", "stop"]);
  }

  async destroy(): Promise<void> {
    await this.stop().catch(() => undefined);
    await rm(this.dir, { recursive: true, force: true });
  }

  private async asPostgres(command: string, args: string[]): Promise<void> {
    const asRoot = process.getuid?.() === 0;
    await run(asRoot ? "runuser" : command, asRoot ? ["-u", "postgres", "--", command, ...args] : args);
  }
}
