import type { HarnessOptions } from "../../support/harness.js";
import { testVoiceSettings } from "../../voice-calls/support.js";

/** The address vendors are told to reach Parley at; tests reach it directly on loopback instead. */
export const publicBaseUrl = "https://parley.example.test";

/** The harness options of the vendor suites: PUBLIC_BASE_URL set and the app listening on a loopback port, as vendors need. */
export function telephonySuite(env: Record<string, string> = {}): HarnessOptions {
  return {
    env: { PUBLIC_BASE_URL: publicBaseUrl, ...env },
    voice: { ...testVoiceSettings, vendorTimeoutMs: 1500, vendorSocketGraceMs: 1000, recordWaitMs: 5000 },
    listen: true,
  };
}
