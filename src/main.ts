import { createApp } from "./app.js";
import { ConfigError, loadConfig, type Config } from "./config.js";
import { trimFreedMemory } from "./process-memory.js";

function printFirstStart(config: Config, keys: NonNullable<Awaited<ReturnType<typeof createApp>>["firstStart"]>): void {
  const base = `http://localhost:${config.port}`;
  process.stdout.write(
    [
      "",
      "Parley first start: created a demo organization. These keys are shown once; keep them.",
      `  organization id: ${keys.organizationId}`,
      `  API key:         ${keys.apiKey}`,
      `  admin key:       ${keys.adminKey}`,
      `  demo project:    ${keys.projectName} (id ${keys.projectId})`,
      "",
      "For the README's examples:",
      `  export KEY=${keys.apiKey} PROJECT=${keys.projectId}${config.port === 8000 ? "" : ` PORT=${config.port}`}`,
      "",
      "Make a first request:",
      `  curl -s -X POST ${base}/threads -H 'Authorization: ${keys.apiKey}' -H 'Content-Type: application/json' -d '{"project_name":"${keys.projectName}"}'`,
      `  curl -s -X POST ${base}/chat -H 'Authorization: ${keys.apiKey}' -H 'Content-Type: application/json' \\`,
      `    -d '{"thread_id":"<thread_id from above>","message":"What are your opening hours?","service_config_name":"${keys.projectName}"}'`,
      "",
    ].join("\n") + "\n",
  );
}

export async function serve(): Promise<void> {
  let config: Config;
  try {
    config = loadConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`parley: invalid setting: ${error.message}\n`);
      process.exit(2);
    }
    throw error;
  }
  const app = await createApp(config);
  await app.server.listen({ port: config.port, host: config.host });
  if (app.firstStart) printFirstStart(config, app.firstStart);
  const trimmer = trimFreedMemory(config.memoryTrimIntervalMs);
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.server.log.info({ signal }, "shutting down: finishing in-flight requests");
    trimmer.stop();
    await app.close();
    process.exit(0);
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
}

if (import.meta.url === `file://${process.argv[1]}`) await serve();
