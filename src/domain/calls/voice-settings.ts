/** Timings of the voice machinery that are not per project; `config.ts` reads them, with their defaults, from the environment. */
export interface VoiceSettings {
  /** How long a web call's client has to join after `web_call.ready` before the call ends as `error_user_not_joined`. */
  webCallJoinTimeoutMs: number;
  /** How often an instance vouches for the calls it carries. */
  heartbeatMs: number;
  /** A live call whose carrier has not vouched for it this long is taken as lost (`error_instance_lost`). */
  staleAfterMs: number;
  /** How often an idle scheduler worker looks for due jobs (pg-boss allows 0.5 s at least). */
  schedulerPollSeconds: number;
  /** Ping interval of the events and web-call WebSockets; a client that misses a pong is dropped. */
  socketPingMs: number;
  /** How long a telephony vendor's REST API may take to answer (creating or ending a call). */
  vendorTimeoutMs: number;
  /** How long a vendor socket naming a call not yet bound waits for it (the vendor's answer may still be on its way). */
  vendorSocketGraceMs: number;
  /**
   * How long an ended call waits for the record of the instance carrying its audio (its recording and timed
   * transcript) before it ends without one: that instance is wedged, or lost between two heartbeats.
   */
  recordWaitMs: number;
  /**
   * How long past its `max_call_seconds` an ongoing call may still run before any instance's sweep ends it: the
   * instance carrying a call ends it on time; the sweep is for calls whose carrier (and its timer) is gone.
   */
  lengthGraceMs: number;
  /** `audio`: every call runs through the speech pipeline; `text`: simulated and web calls go as text (fast tests), telephony still carries audio. */
  speechMode: "audio" | "text";
  /** Shared offline engines: pocketsphinx decoders per language, eSpeak NG workers. */
  sttWorkers: number;
  ttsWorkers: number;
  /** Told each voice turn's latency (end of caller speech → first agent audio), for benchmarks. */
  onTurnLatency?: (ms: number) => void;
}
