import { existsSync } from "node:fs";
import path from "node:path";
import { ConfigError, recordingsLocation, type Config } from "./config.js";
import { CopyRefused, copyDatabase, type CopyProgress, type TableVerification } from "./store/database-copy.js";
import { migrate } from "./store/migrate.js";
import { openPglite } from "./store/pglite-db.js";
import { openPostgres } from "./store/postgres-db.js";
import { FileRecordingStorage } from "./store/recording-files.js";
import { S3RecordingStorage } from "./store/recording-objects.js";
import { copyRecordings, type RecordingsCopied } from "./store/recordings-copy.js";

/** `parley db copy --from DATA_DIR --to postgres://…`: the embedded database's data into an empty PostgreSQL. */

export class CommandError extends Error {}

export const dbCopyUsage = "parley db copy --from DATA_DIR --to postgres://user:password@host:5432/database";

function option(args: string[], name: string): string | undefined {
  for (let index = 0; index < args.length; index += 1) {
    const arg = args[index]!;
    if (arg === name) return args[index + 1];
    if (arg.startsWith(`${name}=`)) return arg.slice(name.length + 1);
  }
  return undefined;
}

function parseArguments(args: string[]): { from: string; to: string } {
  const from = option(args, "--from");
  const to = option(args, "--to");
  const unknown = args.filter((arg, index) => !/^--(from|to)(=|$)/.test(arg) && !/^--(from|to)$/.test(args[index - 1] ?? ""));
  if (!from || !to || unknown.length > 0) throw new CommandError(`usage: ${dbCopyUsage}`);
  // PGlite creates an empty database in a folder that holds none: a mistyped path must not copy "nothing" successfully.
  if (!existsSync(path.join(from, "PG_VERSION"))) throw new CommandError(`${from} holds no Parley embedded database (no PG_VERSION file): give the DATA_DIR the server used`);
  let url: URL;
  try {
    url = new URL(to);
  } catch {
    throw new CommandError(`--to must be a postgres:// URL, got "${to}"`);
  }
  if (url.protocol !== "postgres:" && url.protocol !== "postgresql:") throw new CommandError(`--to must be a postgres:// URL, got "${url.protocol}//…"`);
  return { from: path.resolve(from), to };
}

const barWidth = 30;

/** A bar redrawn in place on a terminal; on anything else, plain lines: one per table and one every 100,000 rows. */
function progressReporter(stream: NodeJS.WriteStream): { report(progress: CopyProgress): void; done(): void; abort(): void } {
  let lastDraw = 0;
  let lastTable = "";
  let lastLine = 0;
  const finishTable = (table: string, rows: number) => stream.write(`copied ${table}: ${rows.toLocaleString("en-US")} rows\n`);
  let lastProgress: CopyProgress | undefined;
  if (!stream.isTTY) {
    return {
      report(progress) {
        if (lastProgress && progress.table !== lastProgress.table) finishTable(lastProgress.table, lastProgress.tableRows);
        if (progress.tableRows - lastLine >= 100_000 || progress.table !== lastTable) {
          if (progress.tableRows > 0 && progress.tableRows < progress.tableTotal) {
            stream.write(`  ${progress.table}: ${progress.tableRows.toLocaleString("en-US")} of ${progress.tableTotal.toLocaleString("en-US")}\n`);
          }
          lastLine = progress.tableRows;
        }
        lastTable = progress.table;
        lastProgress = progress;
      },
      done() {
        if (lastProgress) finishTable(lastProgress.table, lastProgress.tableRows);
      },
      abort: () => undefined,
    };
  }
  const draw = (progress: CopyProgress) => {
    const share = progress.total === 0 ? 1 : progress.copied / progress.total;
    const filled = Math.round(share * barWidth);
    const bar = "#".repeat(filled) + "-".repeat(barWidth - filled);
    const line = `[${bar}] ${(share * 100).toFixed(0).padStart(3)}%  ${progress.copied.toLocaleString("en-US")}/${progress.total.toLocaleString("en-US")} rows  ${progress.table}`;
    stream.write(`\r${line.padEnd(stream.columns ? Math.min(stream.columns - 1, 120) : 100)}`);
  };
  return {
    report(progress) {
      lastProgress = progress;
      const now = Date.now();
      if (now - lastDraw >= 100 || progress.copied === progress.total) {
        lastDraw = now;
        draw(progress);
      }
    },
    done() {
      if (lastProgress) draw(lastProgress);
      stream.write("\n");
    },
    abort() {
      stream.write("\n");
    },
  };
}

/** RECORDINGS_URL of the command's environment: where the instances on the target will keep recordings. */
function recordingsTarget(): Config["recordings"] {
  try {
    return recordingsLocation(process.env);
  } catch (error) {
    if (error instanceof ConfigError) throw new CommandError(`invalid setting: ${error.message}`);
    throw error;
  }
}

/** With RECORDINGS_URL set, the folder's recordings go to the object store, before the rows that name them. */
async function copyRecordingsTo(target: Config["recordings"], source: Parameters<typeof copyRecordings>[0], from: string): Promise<RecordingsCopied | undefined> {
  if (target.kind !== "s3") return undefined;
  const objects = new S3RecordingStorage(target);
  try {
    const copied = await copyRecordings(source, new FileRecordingStorage(path.join(from, "recordings")), objects);
    process.stderr.write(`copied recordings: ${copied.copied} (${(copied.bytes / 1_048_576).toFixed(1)} MB) to s3://${target.bucket}/${target.prefix}\n`);
    for (const key of copied.missing) process.stderr.write(`  not in ${from}/recordings, left out: ${key}\n`);
    return copied;
  } finally {
    objects.close();
  }
}

function recordingsLine(target: Config["recordings"], copied: RecordingsCopied | undefined): string {
  if (target.kind === "s3" && copied) {
    return `  recordings/    copied too: ${copied.copied} recordings in s3://${target.bucket}/${target.prefix} (start Parley with the same RECORDINGS_URL)`;
  }
  return "  recordings/    the call recordings: keep them under DATA_DIR/recordings where Parley runs";
}

function summary(verified: TableVerification[], from: string, recordings: string): string {
  const width = Math.max(...verified.map((table) => table.table.length));
  return [
    "Copied and verified (rows and checksum identical on both sides):",
    ...verified.map((table) => `  ${table.table.padEnd(width)}  ${String(table.rows).padStart(10)} rows  ${table.checksum}`),
    "",
    `Now start Parley with DATABASE_URL set to the target. ${from} still holds what is not in the database:`,
    `  secrets.json   the JWT and encryption keys: keep DATA_DIR=${from}, or set JWT_SECRET and ENCRYPTION_KEY to its values`,
    "                 (every instance needs the same: thread tokens and encrypted provider keys depend on them)",
    recordings,
    "",
  ].join("\n");
}

export async function runDbCopy(args: string[]): Promise<void> {
  const { from, to } = parseArguments(args);
  const recordings = recordingsTarget();
  const source = await openPglite(from);
  const target = openPostgres(to, 2);
  try {
    try {
      await target.ping();
    } catch (error) {
      throw new CommandError(`cannot reach the target database: ${(error as Error).message}`);
    }
    await migrate(source);
    await migrate(target);
    const copiedRecordings = await copyRecordingsTo(recordings, source, from);
    const progress = progressReporter(process.stderr);
    const verified = await copyDatabase(source, target, { onProgress: progress.report }).catch((error: unknown) => {
      progress.abort();
      throw error;
    });
    progress.done();
    process.stdout.write(summary(verified, from, recordingsLine(recordings, copiedRecordings)));
  } catch (error) {
    if (error instanceof CopyRefused) throw new CommandError(error.message);
    throw error;
  } finally {
    await target.close();
    await source.close();
  }
}
