#!/usr/bin/env -S node --max-semi-space-size=2
// The V8 flag above is repeated in package.json's "start" script, which runs this file with `node`: a young
// generation of 2 MB semi-spaces, what V8 itself picks for a heap of a few hundred megabytes, instead of the 16 MB it
// picks on a machine with gigabytes, whose pages stay resident once touched (docs/deployment.md, "Memory and
// start-up"; chat throughput measured the same).
import { register } from "tsx/esm/api";

register();
await import("../src/cli.ts");
