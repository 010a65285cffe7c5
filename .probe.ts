import { readFileSync } from "node:fs";
const mb = (n: number) => (n / 1048576).toFixed(0) + " MB";
function report(label: string) {
  const m = process.memoryUsage();
  const rss = /VmRSS:\s+(\d+)/.exec(readFileSync("/proc/self/status", "utf8"))![1];
  console.log(label.padEnd(34), "rss", (Number(rss) / 1024).toFixed(0), "MB  heapUsed", mb(m.heapUsed), " heapTotal", mb(m.heapTotal), " external", mb(m.external), " arrayBuffers", mb(m.arrayBuffers));
}
report("node + tsx");
const step = process.argv[2] ?? "all";
await import("fastify");
report("fastify imported");
const { PGlite } = await import("@electric-sql/pglite");
report("pglite imported");
if (step === "pglite") {
  const { pg_trgm } = await import("@electric-sql/pglite/contrib/pg_trgm");
  const pg = await PGlite.create({ dataDir: "/tmp/memtest/pgonly", extensions: { pg_trgm } });
  await pg.query("select 1");
  report("pglite open (data dir)");
  console.log("pglite wasm heap", mb((pg as unknown as { mod: { HEAP8: Uint8Array } }).mod?.HEAP8?.length ?? 0));
} else {
  const { createApp } = await import("./src/app.js");
  report("app graph imported");
  const { loadConfig } = await import("./src/config.js");
  const app = await createApp(loadConfig({ DATA_DIR: "/tmp/memtest/app", LOG_LEVEL: "warn" }));
  report("app created (PGlite + espeak)");
  await new Promise((r) => setTimeout(r, 5000));
  global.gc?.();
  report("idle 5 s after gc");
  await app.close();
}
process.exit(0);
