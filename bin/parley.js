#!/usr/bin/env -S node --max-semi-space-size=4
// The V8 flag above is repeated in package.json's "start" script, which runs this file with `node`: a young
// generation of 4 MB semi-spaces instead of Node's 16 MB, whose pages stay resident once touched (docs/deployment.md,
// "Memory and start-up").
import { register } from "tsx/esm/api";

register();
await import("../src/cli.ts");
