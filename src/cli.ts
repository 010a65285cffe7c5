import { readFile } from "node:fs/promises";

const usage = `parley: run and administer a Parley server

  parley serve                                    start the server (same as npm start)
  parley org create <name>                        create an organization; prints its API key once
  parley org list [cursor]                        list organizations, oldest first
  parley key create <org_id>                      create another API key; printed once
  parley key list <org_id> [cursor]               list an organization's keys (redacted, with dates)
  parley key rotate <key_id>                      replace a key: the new one printed once, the old revoked
  parley key revoke <key_id>                      revoke an API key at once
  parley project create <org_id> <name> <file>    create a project from a JSON config file
  parley project list <org_id> [cursor]           list an organization's projects
  parley project publish <project_id> <file>      publish a new config version from a JSON file
  parley project show <project_id>                show a project, its current config and versions
  parley admin reset-key                          on the server: replace a lost admin key (printed once)
  parley db copy --from DATA_DIR --to postgres://user:pass@host/db
                                                  copy the embedded database into an empty PostgreSQL (docs/deployment.md)

Settings: PARLEY_URL (default http://127.0.0.1:8000), PARLEY_ADMIN_KEY (or ADMIN_API_KEY).
"admin reset-key" talks to the database, not the server: it reads the server's own settings (DATA_DIR or
DATABASE_URL); with the embedded database, stop the server first.`;

class CliError extends Error {}

async function call(method: string, path: string, body?: unknown): Promise<unknown> {
  const base = process.env.PARLEY_URL ?? "http://127.0.0.1:8000";
  const adminKey = process.env.PARLEY_ADMIN_KEY ?? process.env.ADMIN_API_KEY;
  if (!adminKey) throw new CliError("set PARLEY_ADMIN_KEY to the admin key");
  const response = await fetch(base.replace(/\/$/, "") + path, {
    method,
    headers: { authorization: `Bearer ${adminKey}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  if (!response.ok) throw new CliError(`${method} ${path} answered ${response.status}: ${text}`);
  return text === "" ? { ok: true } : JSON.parse(text);
}

async function readConfig(file: string | undefined): Promise<unknown> {
  if (!file) throw new CliError("a JSON config file is required");
  try {
    return JSON.parse(await readFile(file, "utf8"));
  } catch (error) {
    throw new CliError(`cannot read ${file}: ${(error as Error).message}`);
  }
}

function page(path: string, cursor: string | undefined): string {
  return cursor === undefined ? path : `${path}?cursor=${encodeURIComponent(cursor)}`;
}

/** Writes a new admin key's hash straight into the database; loaded only for this command. */
async function resetAdminKeyInDatabase(): Promise<{ admin_key: string; note: string }> {
  const [{ loadConfig }, { migrate }, { AdminStore }, { resetAdminKey }] = await Promise.all([
    import("./config.js"),
    import("./store/migrate.js"),
    import("./store/admin-store.js"),
    import("./domain/access/admin-key-reset.js"),
  ]);
  const config = loadConfig();
  if (config.adminApiKey !== undefined) throw new CliError("ADMIN_API_KEY is set: it is the admin key, and a stored one would not be used");
  const db = config.databaseUrl
    ? (await import("./store/postgres-db.js")).openPostgres(config.databaseUrl, 1)
    : await (await import("./store/pglite-db.js")).openPglite(config.dataDir);
  try {
    await migrate(db);
    const adminKey = await resetAdminKey(new AdminStore(db));
    return { admin_key: adminKey, note: "shown once; the previous admin key no longer works" };
  } finally {
    await db.close();
  }
}

async function run(args: string[]): Promise<unknown> {
  const [group, action, ...rest] = args;
  const command = `${group ?? ""} ${action ?? ""}`.trim();
  const need = (count: number) => {
    if (rest.length < count) throw new CliError(`missing arguments for "${command}"\n\n${usage}`);
  };
  switch (command) {
    case "org create":
      need(1);
      return call("POST", "/admin/organizations", { name: rest.join(" ") });
    case "org list":
      return call("GET", page("/admin/organizations", rest[0]));
    case "key list":
      need(1);
      return call("GET", page(`/admin/organizations/${encodeURIComponent(rest[0]!)}/api-keys`, rest[1]));
    case "key rotate":
      need(1);
      return call("POST", `/admin/api-keys/${encodeURIComponent(rest[0]!)}/rotate`);
    case "project list":
      need(1);
      return call("GET", page(`/admin/organizations/${encodeURIComponent(rest[0]!)}/projects`, rest[1]));
    case "admin reset-key":
      return resetAdminKeyInDatabase();
    case "key create":
      need(1);
      return call("POST", `/admin/organizations/${encodeURIComponent(rest[0]!)}/api-keys`);
    case "key revoke":
      need(1);
      return call("DELETE", `/admin/api-keys/${encodeURIComponent(rest[0]!)}`);
    case "project create":
      need(3);
      return call("POST", `/admin/organizations/${encodeURIComponent(rest[0]!)}/projects`, { name: rest[1], config: await readConfig(rest[2]) });
    case "project publish":
      need(2);
      return call("PUT", `/admin/projects/${encodeURIComponent(rest[0]!)}/config`, { config: await readConfig(rest[1]) });
    case "project show":
      need(1);
      return call("GET", `/admin/projects/${encodeURIComponent(rest[0]!)}`);
    default:
      throw new CliError(usage);
  }
}

// Each command imports only what it needs, so that the admin commands start without loading the server.
const args = process.argv.slice(2);
if (args[0] === "serve") {
  const { serve } = await import("./main.js");
  await serve();
} else if (args[0] === "db" && args[1] === "copy") {
  const { CommandError, runDbCopy } = await import("./db-copy-command.js");
  try {
    await runDbCopy(args.slice(2));
  } catch (error) {
    process.stderr.write(`parley db copy: ${error instanceof CommandError ? error.message : error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  }
} else {
  try {
    process.stdout.write(JSON.stringify(await run(args), null, 2) + "\n");
  } catch (error) {
    process.stderr.write(`${error instanceof CliError ? error.message : String(error)}\n`);
    process.exit(1);
  }
}
