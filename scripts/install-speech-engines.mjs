// Before `npm start`: installs the offline speech engines from Debian when they are missing and this user may
// (root, or sudo without a password). Otherwise it says what to install; the server starts either way, and
// GET /readyz reports any engine still missing.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";

const needed = [
  { name: "pocketsphinx", present: () => existsSync("/usr/lib/x86_64-linux-gnu/libpocketsphinx.so.3") || onPath("pocketsphinx_batch") },
  { name: "pocketsphinx-en-us", present: () => existsSync("/usr/share/pocketsphinx/model/en-us") },
  { name: "flite", present: () => onPath("flite") },
];

function onPath(program) {
  return spawnSync("sh", ["-c", `command -v ${program}`], { stdio: "ignore" }).status === 0;
}

const missing = needed.filter((engine) => !engine.present()).map((engine) => engine.name);
if (missing.length === 0 || process.env.PARLEY_SKIP_SPEECH_INSTALL === "true") process.exit(0);
const command = `apt-get install -y --no-install-recommends ${missing.join(" ")}`;
const asRoot = process.getuid?.() === 0;
const sudo = !asRoot && onPath("sudo") && spawnSync("sudo", ["-n", "true"], { stdio: "ignore" }).status === 0;
if (!onPath("apt-get") || (!asRoot && !sudo)) {
  console.warn(`parley: speech engines missing (${missing.join(", ")}); calls need them. Install with: sudo ${command}`);
  process.exit(0);
}
console.log(`parley: installing the offline speech engines (${missing.join(", ")}) with apt-get`);
const run = (args) => execFileSync(sudo ? "sudo" : args[0], sudo ? args : args.slice(1), { stdio: "inherit", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
try {
  run(["apt-get", "update"]);
  run(["apt-get", "install", "-y", "--no-install-recommends", ...missing]);
} catch {
  console.warn(`parley: installing the speech engines failed; the server starts without them (install with: sudo ${command})`);
}
