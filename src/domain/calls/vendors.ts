import type { VoiceProviderName } from "../projects/project-config.js";

/**
 * How each voice provider shares a call's work with Parley. Retell carries the whole call (telephony, speech, its
 * own transcript, recording and analysis): no Parley instance owns its live part, and its results come from
 * Retell's webhooks. Twilio carries the line only: the instance holding its media stream owns the call, and the
 * recording is Parley's own. The simulated provider does everything in the owning instance.
 */
export function carriedByVendor(provider: string): boolean {
  return provider === "retell";
}

export function resultsFromVendor(provider: string): boolean {
  return provider === "retell";
}

/** Providers that reach Parley from the outside, and so need `PUBLIC_BASE_URL`. */
export function needsPublicAddress(provider: VoiceProviderName): boolean {
  return provider !== "simulated";
}
