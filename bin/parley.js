#!/usr/bin/env -S node --max-semi-space-size=8
// The V8 flag above is repeated in package.json's "start" script, which runs this file with `node`: a young
// generation of 8 MB semi-spaces, not the 16 MB V8 picks on a machine with gigabytes, whose pages stay resident once
// touched, nor the 2 MB it picks for a small heap, under which chat turns spent a sixth of their CPU in scavenges
// (docs/deployment.md, "Memory and start-up").
import { register } from "tsx/esm/api";

register();
await import("../src/cli.ts");
