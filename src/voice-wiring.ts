import { createHmac, randomUUID } from "node:crypto";
import { hostname } from "node:os";
import path from "node:path";
import type { Logger } from "pino";
import type { Config } from "./config.js";
import { renderRecording } from "./providers/voice/recording.js";
import { SimulatedVoiceProvider } from "./providers/voice/simulated.js";
import { createSpeechSynthesizer } from "./providers/voice/speech.js";
import { SpeechCalls } from "./providers/voice/speech-calls.js";
import { SpeechEngines, type EngineStatus } from "./providers/speech/engines.js";
import type { ServerSecrets } from "./server-secrets.js";
import { PgBossCallJobs } from "./store/calls-scheduler.js";
import { CallsStore } from "./store/calls-store.js";
import type { Db } from "./domain/shared/database.js";
import { EventsStore } from "./store/events-store.js";
import type { ConversationsStore } from "./store/conversations-store.js";
import type { UsageStore } from "./store/usage-store.js";
import { FileRecordingStorage } from "./store/recording-files.js";
import type { ThreadLocks } from "./domain/threads/thread-locks.js";
import { CallLifecycle } from "./domain/calls/call-lifecycle.js";
import { CallResults } from "./domain/calls/call-results.js";
import { CallSupervisor } from "./domain/calls/call-supervisor.js";
import { CallService } from "./domain/calls/call-service.js";
import type { ChatService, LlmFactory } from "./domain/chat/chat-service.js";
import { EventsService } from "./domain/events/events-service.js";
import type { Invalidations } from "./domain/cache/invalidation.js";
import type { ProjectService } from "./domain/projects/project-service.js";
import { recordingKey, RecordingUrlSigner, type RecordingStorage } from "./domain/calls/recordings.js";
import type { ThreadService } from "./domain/threads/thread-service.js";
import type { VoiceSettings } from "./domain/calls/voice-settings.js";

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
  invalidations: Invalidations;
  log: Logger;
}

export interface Voice {
  calls: CallService;
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
  const events = new EventsService(db, new EventsStore(db), log, deps.config.eventsRetentionHours);
  const jobs = new PgBossCallJobs(db, settings.schedulerPollSeconds, log);
  const lifecycle = new CallLifecycle(
    { db, calls: callsStore, conversations: deps.conversations, usage: deps.usage },
    deps.projects,
    events,
    deps.locks,
    jobs,
    { owner, webCallJoinTimeoutMs: settings.webCallJoinTimeoutMs, log, invalidations: deps.invalidations },
  );
  const storage = new FileRecordingStorage(path.join(deps.config.dataDir, "recordings"));
  const results = new CallResults(callsStore, deps.projects, storage, createSpeechSynthesizer, deps.llm, log);
  const engines = new SpeechEngines({ sttWorkers: settings.sttWorkers, ttsWorkers: settings.ttsWorkers });
  const speechCalls =
    settings.speechMode === "audio"
      ? new SpeechCalls({
          engines,
          log,
          saveRecording: async (callId, wav) => {
            await storage.put(recordingKey(callId), wav);
            return recordingKey(callId);
          },
          ...(settings.onTurnLatency ? { onTurnLatency: settings.onTurnLatency } : {}),
        })
      : undefined;
  if (speechCalls) lifecycle.setMediaFinalizer((callId) => speechCalls.finish(callId));
  const provider = new SimulatedVoiceProvider(lifecycle, {
    log,
    speak: async (text) => (await renderRecording([{ role: "agent", content: text, startSeconds: 0 }], await results.synthesizerOnce())).wav,
    ...(speechCalls
      ? {
          audio: {
            speech: speechCalls,
            // The callee's own voice, told apart from the agent's by ear; eSpeak NG, whatever the project's engines.
            calleeVoice: () => engines.tts({ provider: "espeak", voice: "en-us", base_url: "", model: "" }, {}, { pitch: 60 }),
          },
        }
      : {}),
  });
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
    log,
  });
  const supervisor = new CallSupervisor(db, callsStore, lifecycle, provider, {
    owner,
    heartbeatMs: settings.heartbeatMs,
    staleAfterMs: settings.staleAfterMs,
    log,
  });
  // A key of its own, derived from the JWT secret, so that every instance signs recording URLs alike.
  const signingKey = createHmac("sha256", deps.secrets.jwtSecret).update("parley recording URLs").digest("hex");
  const signer = new RecordingUrlSigner(signingKey, deps.config.recordingUrlTtlSeconds);

  return {
    calls,
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
      await results.close();
      await engines.close();
      await events.stop();
    },
  };
}
