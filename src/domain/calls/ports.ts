/**
 * What a voice provider can do, which the domain asks instead of comparing provider names: a new provider states
 * its own, and nothing in the domain changes.
 */
export interface VoiceCapabilities {
  /**
   * Who carries a call's live part: the vendor (no Parley instance owns the call, so none ends it when lost), or
   * Parley (the instance holding the call's audio owns it; see CallSupervisor).
   */
  carries: "vendor" | "parley";
  /**
   * Where a call's recording and transcript come from: the vendor's webhooks (`vendor`); Parley's speech pipeline,
   * recording the call's real audio as it ends (`live`: nothing may stand in for a real caller's voice); or, for
   * Parley's own simulation, also a recording synthesized from the history when none was taken live (`rendered`).
   */
  records: "vendor" | "live" | "rendered";
  /** Who hosts the provider's web calls: the vendor, or Parley's own call socket. */
  webCalls: "vendor" | "parley";
  /** Whether a call can be transferred to another line. */
  transfers: boolean;
  /** Whether the vendor reaches this server from outside (webhooks, media sockets), which needs PUBLIC_BASE_URL. */
  callsBack: boolean;
}

/** The capabilities of a provider by its name, as calls and project versions record it. */
export type CapabilitiesOf = (provider: string) => VoiceCapabilities;
