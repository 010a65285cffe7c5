import { createHmac, randomUUID } from "node:crypto";
import { hostname } from "node:os";
import path from "node:path";
import type { Logger } from "pino";
import type { Config } from "./config.js";
import { SynthesizedRecordingRenderer } from "./providers/speech/recording.js";
import { LiveSockets } from "./providers/voice/live-sockets.js";
import { ProviderRouter } from "./providers/voice/provider-router.js";
import type { RetellLlmSession } from "./providers/voice/retell/retell-llm-session.js";
import { RetellVoiceProvider } from "./providers/voice/retell/retell-provider.js";
import { SimulatedVoiceProvider } from "./providers/voice/simulated/simulated-provider.js";
import type { TwilioMediaSession } from "./providers/voice/twilio/twilio-media-session.js";
import { TwilioVoiceProvider } from "./providers/voice/twilio/twilio-provider.js";
import { createRecordingVoices } from "./providers/speech/recording-voices.js";
import { SpeechCalls } from "./providers/speech/pipeline/speech-calls.js";
import { SpeechEngines, type EngineStatus } from "./providers/speech/engines.js";
import type { ServerSecrets } from "./server-secrets.js";
import { PgBossCallJobs } from "./store/calls-scheduler.js";
import { CallsStore } from "./store/calls-store.js";
import { VendorCallsStore } from "./store/vendor-calls-store.js";
import type { Db } from "./domain/shared/database.js";
import { EventsStore } from "./store/events-store.js";
import type { ConversationsStore } from "./store/conversations-store.js";
import type { UsageStore } from "./store/usage-store.js";
import { FileRecordingStorage } from "./store/recording-files.js";
import { S3RecordingStorage } from "./store/recording-objects.js";
import type { ThreadLocks } from "./domain/threads/thread-locks.js";
import { CallEvents } from "./domain/calls/call-events.js";
import type { CapabilitiesOf } from "./domain/calls/ports.js";
import { CallLifecycle } from "./domain/calls/call-lifecycle.js";
import { CallResults } from "./domain/calls/call-results.js";
import { CallSupervisor } from "./domain/calls/call-supervisor.js";
import { CallService } from "./domain/calls/call-service.js";
import { RetellCalls } from "./providers/voice/retell/retell-calls.js";
import { TwilioCalls } from "./providers/voice/twilio/twilio-calls.js";
import { TwilioWebhooks } from "./providers/voice/twilio/twilio-webhooks.js";
import { RetellWebhooks } from "./providers/voice/retell/retell-webhooks.js";
import type { TelephonyRoutesOptions } from "./http/telephony-routes.js";
import { CallCarriers } from "./domain/calls/call-carriers.js";
import type { ChatService, LlmFactory } from "./domain/chat/chat-service.js";
import { EventsService } from "./domain/events/events-service.js";
import type { Invalidations } from "./domain/cache/invalidation.js";
import type { ProjectService } from "./domain/projects/project-service.js";
import { recordingKey, RecordingUrlSigner, type RecordingStorage } from "./domain/calls/recordings.js";
import type { ThreadService } from "./domain/threads/thread-service.js";
import type { VoiceSettings } from "./domain/calls/voice-settings.js";
import type { CallToolSupport } from "./domain/calls/call-agent.js";
import { SecretBox } from "./domain/access/secrets.js";
import { MessagesStore } from "./store/messages-store.js";

export interface VoiceDeps {
  config: Config;
  settings: VoiceSettings;
  db: Db;
  secrets: ServerSecrets;
  threads: ThreadService;
  projects: ProjectService;
  conversations: ConversationsStore;
  usage: UsageStore;
  locks: ThreadLocks;
  llm: LlmFactory;
  chat: ChatService;
  tools: CallToolSupport;
  invalidations: Invalidations;
  log: Logger;
}

export interface Voice {
  calls: CallService;
  /** What telephony vendors call: their webhooks, verified and applied, and their sockets. */
  telephony: TelephonyRoutesOptions;
  events: EventsService;
  signer: RecordingUrlSigner;
  storage: RecordingStorage;
  settings: VoiceSettings;
  /** The offline speech engines and whether each runs here, for `/readyz`. */
  speechStatus(): Promise<EngineStatus[]>;
  start(): Promise<void>;
  /** Hangs up the calls this instance carries; called before the HTTP server closes its sockets. */
  stopCalls(): Promise<void>;
  close(): Promise<void>;
}

/** Where this instance keeps recordings: RECORDINGS_URL's object storage, or else DATA_DIR/recordings. */
function recordingStorage(config: Pick<Config, "recordings" | "dataDir">): RecordingStorage {
  const { recordings } = config;
  return recordings.kind === "s3" ? new S3RecordingStorage(recordings) : new FileRecordingStorage(path.join(config.dataDir, "recordings"));
}

/**
 * The voice feature's share of the composition root (app.ts calls it): calls, their provider, durable jobs, the
 * events stream and recordings, wired from the config and the services the app already has.
 */
export function createVoice(deps: VoiceDeps): Voice {
  const { db, log } = deps;
  const { settings } = deps;
  // Names the instance in `calls.owner`: which process carries a live call (see CallSupervisor).
  const owner = `${hostname()}/${process.pid}/${randomUUID()}`;
  const callsStore = new CallsStore(db);
  const vendorStore = new VendorCallsStore(db);
  const events = new EventsService(db, new EventsStore(db), log, deps.config.eventsRetentionHours);
  // The router is made below, from providers that need the lifecycle; it is asked only once calls run.
  const capabilities: CapabilitiesOf = (name) => provider.capabilitiesOf(name);
  const jobs = new PgBossCallJobs(db, settings.schedulerPollSeconds, log);
  const lifecycle = new CallLifecycle(
    { db, calls: callsStore, conversations: deps.conversations, usage: deps.usage },
    deps.projects,
    events,
    deps.locks,
    jobs,
    { owner, webCallJoinTimeoutMs: settings.webCallJoinTimeoutMs, log, invalidations: deps.invalidations, capabilities },
  );
  const storage = recordingStorage(deps.config);
  const recordings = new SynthesizedRecordingRenderer(createRecordingVoices);
  const results = new CallResults(callsStore, deps.projects, storage, recordings, deps.llm, log, capabilities);
  const engines = new SpeechEngines({ sttWorkers: settings.sttWorkers, ttsWorkers: settings.ttsWorkers });
  // Telephony always carries audio; SPEECH_MODE=text runs simulated and web calls through pipelines without audio stages.
  const speechCalls = new SpeechCalls({
    engines,
    log,
    saveRecording: async (callId, wav) => {
      await storage.put(recordingKey(callId), wav);
      return recordingKey(callId);
    },
    ...(settings.onTurnLatency ? { onTurnLatency: settings.onTurnLatency } : {}),
  });
  lifecycle.setMediaFinalizer((callId) => speechCalls.finish(callId));
  const simulated = new SimulatedVoiceProvider(lifecycle, {
    log,
    speak: async (text) => (await recordings.render([{ role: "agent", content: text, startSeconds: 0 }])).wav,
    speech: speechCalls,
    ...(settings.speechMode === "audio"
      ? {
          audio: {
            // The callee's own voice, told apart from the default agent voice (flite kal16) by ear: flite's rms, which
            // the offline recognizer hears second best in the speech benchmark (docs/voice.md), whatever the project's engines.
            calleeVoice: () => engines.tts({ provider: "flite", voice: "rms", base_url: "", model: "" }, {}),
          },
        }
      : {}),
  });
  const publicBaseUrl = deps.config.publicBaseUrl?.replace(/\/+$/, "");
  const retellSockets = new LiveSockets<RetellLlmSession>();
  const twilioStreams = new LiveSockets<TwilioMediaSession>();
  // Derived from the JWT secret like the recording key, so that whichever instance Twilio's stream reaches can check it.
  const mediaKey = createHmac("sha256", deps.secrets.jwtSecret).update("parley twilio media streams").digest();
  const mediaToken = (callId: string) => createHmac("sha256", mediaKey).update(callId).digest("base64url");
  const provider: ProviderRouter = new ProviderRouter(
    {
      simulated,
      retell: new RetellVoiceProvider({ timeoutMs: settings.vendorTimeoutMs, log, closeSockets: (callId) => retellSockets.close(callId) }),
      twilio: new TwilioVoiceProvider({
        publicBaseUrl: () => publicBaseUrl,
        mediaToken,
        timeoutMs: settings.vendorTimeoutMs,
        closeStreams: (callId) => twilioStreams.close(callId),
      }),
    },
    simulated,
  );
  const calls = new CallService({
    db,
    calls: callsStore,
    threads: deps.threads,
    projects: deps.projects,
    lifecycle,
    results,
    jobs,
    provider,
    locks: deps.locks,
    llm: deps.llm,
    owner,
    vendor: vendorStore,
    messages: new MessagesStore(db),
    publicBaseUrl,
    log,
    capabilities,
    tools: deps.tools,
    secretBox: new SecretBox(deps.secrets.encryptionKey),
  });
  const carriers = new CallCarriers({ calls: callsStore, vendor: vendorStore, lifecycle, events: new CallEvents({ db, calls: callsStore, vendor: vendorStore, lifecycle, locks: deps.locks }), service: calls });
  const telephony: TelephonyRoutesOptions = {
    carriers,
    retell: new RetellCalls({ carriers, log, socketGraceMs: settings.vendorSocketGraceMs }),
    retellWebhooks: new RetellWebhooks({ carriers }),
    retellSockets,
    twilio: new TwilioCalls({ carriers, speech: speechCalls, mediaToken, log }),
    twilioWebhooks: new TwilioWebhooks({ carriers, publicBaseUrl, mediaToken, log }),
    twilioStreams,
    publicBaseUrl,
  };
  const supervisor = new CallSupervisor(db, callsStore, lifecycle, provider, {
    owner,
    heartbeatMs: settings.heartbeatMs,
    staleAfterMs: settings.staleAfterMs,
    recordWaitMs: settings.recordWaitMs,
    lengthGraceMs: settings.lengthGraceMs,
    log,
  });
  // A key of its own, derived from the JWT secret, so that every instance signs recording URLs alike.
  const signingKey = createHmac("sha256", deps.secrets.jwtSecret).update("parley recording URLs").digest("hex");
  const signer = new RecordingUrlSigner(signingKey, deps.config.recordingUrlTtlSeconds);

  return {
    calls,
    telephony,
    events,
    signer,
    storage,
    settings,
    // In text-only mode no call needs a speech engine, so there is nothing to report.
    speechStatus: async () => (settings.speechMode === "audio" ? engines.status() : []),
    async start() {
      await events.start();
      await calls.start();
      await supervisor.start();
    },
    async stopCalls() {
      await provider.close();
      await supervisor.stop();
    },
    async close() {
      await lifecycle.abandonOwned();
      await lifecycle.close();
      await jobs.stop();
      await recordings.close();
      await engines.close();
      await events.stop();
      storage.close?.();
    },
  };
}
