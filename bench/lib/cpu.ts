/**
 * CPU time spent by processes (user + system, from /proc), to tell where a request's cost goes on a machine whose
 * two cores the server, PostgreSQL and the load generator share. Linux only; elsewhere every figure is NaN.
 */
import { readFileSync } from "node:fs";
import pg from "pg";

const ticksPerSecond = 100;

function processSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
  } catch {
    return Number.NaN;
  }
}

/** The backends PostgreSQL runs for one database right now. */
export async function backendPids(adminUrl: string, databaseUrl: string): Promise<number[]> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const name = new URL(databaseUrl).pathname.slice(1);
    const rows = await client.query<{ pid: number }>("SELECT pid FROM pg_stat_activity WHERE datname = $1", [name]);
    return rows.rows.map((row) => row.pid);
  } finally {
    await client.end();
  }
}

/**
 * Starts a CPU meter over the processes `list` names; `stop()` gives the seconds they used since. A process that
 * appears meanwhile (a pool opening a connection) counts whole; one that ended meanwhile is lost.
 */
export async function cpuMeter(list: () => Promise<number[]>): Promise<{ stop(): Promise<number> }> {
  const before = new Map((await list()).map((pid) => [pid, processSeconds(pid)]));
  return {
    async stop() {
      let total = 0;
      for (const pid of await list()) {
        const end = processSeconds(pid);
        const start = before.get(pid) ?? 0;
        if (Number.isFinite(start) && Number.isFinite(end)) total += end - start;
      }
      return total;
    },
  };
}
