import type { FastifyInstance } from "fastify";
import pino, { type Logger } from "pino";
import type { Config } from "./config.js";
import { Authenticator, type CachedApiKey } from "./domain/access/credentials.js";
import { changeTags, Invalidations } from "./domain/cache/invalidation.js";
import { runFirstStart, type FirstStartKeys } from "./domain/organizations/first-start.js";
import { OrganizationService } from "./domain/organizations/organization-service.js";
import { ProjectService } from "./domain/projects/project-service.js";
import { SecretBox } from "./domain/access/secrets.js";
import { ThreadTokens } from "./domain/access/thread-tokens.js";
import { ThreadService } from "./domain/threads/thread-service.js";
import { ChatService, turnSetupSize, type ChatToolSupport, type LlmFactory, type TurnSetup } from "./domain/chat/chat-service.js";
import { ConversationRecall } from "./domain/chat/conversation-recall.js";
import { HistoryService } from "./domain/history/history-service.js";
import { SummaryService } from "./domain/chat/summaries.js";
import { RateLimits } from "./domain/access/rate-limits.js";
import { FlexibleRateLimiter } from "./store/rate-limiters.js";
import { createVoice } from "./voice-wiring.js";
import type { VoiceSettings } from "./domain/calls/voice-settings.js";
import { legacyRoutes } from "./http/legacy-routes.js";
import { adminRoutes } from "./http/admin-routes.js";
import { adminListingRoutes } from "./http/admin-listing-routes.js";
import { AdminDirectory } from "./domain/access/admin-directory.js";
import { AdminStore } from "./store/admin-store.js";
import { callRoutes } from "./http/call-routes.js";
import { socketRoutes } from "./http/socket-routes.js";
import { recordingRoutes } from "./http/recording-routes.js";
import { voiceRoutes } from "./http/voice-routes.js";
import { chatRoutes } from "./http/chat-routes.js";
import { simulationRoutes } from "./http/simulation-routes.js";
import { SimulationService } from "./domain/simulations/service.js";
import { PostgresSimulationsStore } from "./store/simulations-store.js";
import { messageRoutes } from "./http/message-routes.js";
import { createLlmProvider } from "./providers/llm/index.js";
import { HttpToolTransport } from "./providers/tools/http-tool-transport.js";
import { MessagesStore } from "./store/messages-store.js";
import { ConversationsStore } from "./store/conversations-store.js";
import { UsageStore } from "./store/usage-store.js";
import { InProcessThreadLocks, PostgresThreadLocks } from "./store/thread-locks.js";
import { TurnsStore } from "./store/turns-store.js";
import { Notifier } from "./store/notifier.js";
import { HttpMetrics } from "./http/metrics.js";
import { buildServer } from "./http/server.js";
import { systemRoutes } from "./http/system-routes.js";
import { webRoutes } from "./http/web-routes.js";
import { buildWidget } from "./web/build.js";
import { threadRoutes } from "./http/thread-routes.js";
import { threadListRoutes } from "./http/thread-list-routes.js";
import { consoleRoutes } from "./http/console-routes.js";
import { ConsoleAssets } from "./web/console-bundle.js";
import { ThreadListing } from "./domain/threads/thread-listing.js";
import { ThreadListingStore } from "./store/thread-listing-store.js";
import { TurnBufferedStdout } from "./log-destination.js";
import { RequestLines } from "./http/request-line.js";
import { loadServerSecrets } from "./server-secrets.js";
import type { Db } from "./domain/shared/database.js";
import { migrate } from "./store/migrate.js";
import { OrganizationsStore, SettingsStore } from "./store/organizations-store.js";
import { openPostgres } from "./store/postgres-db.js";
import { ProjectsStore } from "./store/projects-store.js";
import { SearchIndexMerger } from "./store/search-index-merger.js";
import { ThreadsStore } from "./store/threads-store.js";

export interface App {
  server: FastifyInstance;
  db: Db;
  firstStart: FirstStartKeys | undefined;
  /** Stops accepting, finishes in-flight requests and background work, then closes the database (unless it was lent). */
  close(): Promise<void>;
}

export interface AppOptions {
  /** An already open database (tests share one); the app then leaves it open on close. */
  db?: Db;
  logger?: Logger;
  /** Voice timings (web-call join window, heartbeats); tests shorten them. */
  voice?: Partial<VoiceSettings>;
}

export async function openDatabase(config: Config): Promise<Db> {
  if (config.databaseUrl) return openPostgres(config.databaseUrl, config.databasePoolSize);
  // Loaded only for the embedded database: PGlite's module alone holds tens of megabytes an instance on PostgreSQL never uses.
  const { openPglite } = await import("./store/pglite-db.js");
  return openPglite(config.dataDir);
}

/** The composition root: every store, provider and service is made here from the config and wired together. */
export async function createApp(config: Config, options: AppOptions = {}): Promise<App> {
  const logOutput = options.logger ? undefined : new TurnBufferedStdout();
  const logger =
    options.logger ??
    pino({ level: config.logLevel, redact: { paths: ["req.headers.authorization", "*.api_key", "*.access_token"], censor: "[redacted]" } }, logOutput);
  // The request line holds only the method, route pattern, status, time and request id: nothing to redact, so it is
  // written to the output by hand (the logger only decides whether info lines are on).
  const requestLines = new RequestLines(logger, logOutput);
  const db = options.db ?? (await openDatabase(config));
  await migrate(db);
  const secrets = await loadServerSecrets(config);

  const invalidations = new Invalidations(db, logger, config.cacheMaxAgeMs);
  // Sizes are estimates of the memory they take: the page's bytes plus the entry's key, tags and bookkeeping.
  const renderedPages = invalidations.cache<Buffer>(config.historyCacheMb * 1024 * 1024, (body) => body.length + 512);
  const apiKeys = invalidations.cache<CachedApiKey>(config.credentialCacheKeys, () => 1);
  const turnSetups = invalidations.cache<TurnSetup>(config.chatSetupCacheMb * 1024 * 1024, turnSetupSize);
  await invalidations.start();

  const organizationsStore = new OrganizationsStore(db);
  const settings = new SettingsStore(db);
  const tokens = new ThreadTokens(secrets.jwtSecret, config.threadTokenTtlSeconds);
  const organizations = new OrganizationService(db, organizationsStore, invalidations);
  const projects = new ProjectService(db, new ProjectsStore(db), new SecretBox(secrets.encryptionKey));
  projects.onPublish((organizationId) => invalidations.changed(changeTags.organization(organizationId)));
  const threads = new ThreadService(new ThreadsStore(db), projects, tokens);
  const conversations = new ConversationsStore(db);
  const messages = new MessagesStore(db);
  const locks = config.databaseUrl ? new PostgresThreadLocks(db, config.databaseUrl) : new InProcessThreadLocks();
  const llm: LlmFactory = (agent, apiKey, context) => createLlmProvider(agent, apiKey, { timeoutMs: config.providerTimeoutMs }, context);
  const usage = new UsageStore(db);
  const notifier = new Notifier(db);
  threads.onContextChange((threadId) => invalidations.changed(changeTags.threadSetup(threadId)));
  const tools: ChatToolSupport = {
    transport: new HttpToolTransport({ allowInternalNetworks: config.toolsAllowPrivateNetworks }),
    // The events service is made with the voice services below; a turn runs only once the app is built.
    announce: async (threadId, payload) => {
      await voice.events.publish(threadId, "tool.called", payload);
    },
  };
  const conversationRecall = new ConversationRecall(db, config.chatRecallMb * 1024 * 1024);
  await conversationRecall.start();
  const chat = new ChatService(threads, projects, conversations, new TurnsStore(db, notifier), locks, llm, turnSetups, invalidations, tools, conversationRecall);
  const simulations = new SimulationService(threads, chat, llm, new PostgresSimulationsStore(db));
  const summaries = new SummaryService(threads, projects, conversations, messages, llm);
  const history = new HistoryService(threads, projects, conversations, messages, renderedPages);
  const rateLimiter = new FlexibleRateLimiter(
    config.redisUrl
      ? { kind: "redis", url: config.redisUrl }
      : config.databaseUrl
        ? { kind: "postgres", connectionString: config.databaseUrl }
        : { kind: "memory" },
  );
  const rateLimits = new RateLimits(rateLimiter, {
    perKeyPerMinute: config.rateLimitPerKeyPerMinute,
    perOrganizationPerMinute: config.rateLimitPerOrganizationPerMinute,
  });
  const authenticator = new Authenticator(organizationsStore, settings, tokens, config.adminApiKey, apiKeys);
  const metrics = new HttpMetrics();
  metrics.gauge("parley_history_cache_bytes", "Bytes of rendered history pages held in memory.", () => renderedPages.size);
  metrics.gauge("parley_history_cache_entries", "Rendered history pages held in memory.", () => renderedPages.count);
  metrics.gauge("parley_credential_cache_entries", "API keys held in memory.", () => apiKeys.count);
  metrics.gauge("parley_chat_recall_bytes", "Bytes of the conversations held in memory for streamed turns' guesses.", () => conversationRecall.size);
  metrics.counter("parley_chat_history_guesses_total", "Streamed turns that asked the model with a guessed history, by whether their statement read that history (wrong: one provider request aborted).", "outcome", () => ({ ...conversationRecall.guesses }));
  metrics.gauge("parley_database_listener_up", "1 while this instance hears the database's change notifications.", () => (invalidations.live ? 1 : 0));
  const searchIndexMerger = new SearchIndexMerger(db, config.searchIndexIntervalMs, logger);
  metrics.gauge("parley_search_index_merged_pages", "Pages of the search index's pending list this instance has merged into the index.", () => searchIndexMerger.mergedPages);
  metrics.gauge(
    "parley_search_index_last_merge_timestamp_seconds",
    "When this instance's last successful merge of the search index's pending list began (0: none yet).",
    () => searchIndexMerger.lastMergeBeganAt / 1000,
  );
  const voice = createVoice({
    config,
    settings: { ...config.voice, ...options.voice },
    db,
    secrets,
    threads,
    projects,
    conversations,
    usage,
    locks,
    llm,
    chat,
    tools,
    invalidations,
    log: logger,
  });

  const firstStart = config.adminApiKey ? undefined : await runFirstStart(organizations, projects, settings);

  const server = await buildServer({
    timeouts: config.httpTimeouts,
    logger,
    requestLines,
    bodyLimitBytes: config.bodyLimitBytes,
    authenticator,
    rateLimits,
    metrics,
    routes: [
      ...systemRoutes(db, metrics, voice.speechStatus),
      ...webRoutes(buildWidget),
      ...threadRoutes(threads),
      ...threadListRoutes(new ThreadListing(new ThreadListingStore(db))),
      ...chatRoutes(chat, simulations),
      ...simulationRoutes(simulations),
      ...messageRoutes(history),
      ...adminRoutes(organizations, projects),
      ...adminListingRoutes(new AdminDirectory(db, new AdminStore(db), organizationsStore, invalidations)),
      ...legacyRoutes({ basePath: config.legacyBasePath, chat, threads, messages, summaries }),
      ...voiceRoutes(voice.calls),
      ...callRoutes(voice.calls, { signer: voice.signer, storage: voice.storage }, { publicBaseUrl: config.publicBaseUrl, trustProxyHeaders: config.trustProxyHeaders }),
      ...recordingRoutes(voice.calls, voice.signer, voice.storage),
    ],
  });
  await server.register(consoleRoutes(new ConsoleAssets()));
  await server.register(
    socketRoutes(
      { authenticator, rateLimits },
      {
        threads,
        events: voice.events,
        calls: voice.calls,
        pingMs: voice.settings.socketPingMs,
        telephony: voice.telephony,
      },
    ),
  );
  await voice.start();
  searchIndexMerger.start();

  return {
    server,
    db,
    firstStart,
    /** Stops everything in order; a step that fails does not keep the later ones from running (the first error is rethrown). */
    async close() {
      const failures: unknown[] = [];
      const step = async (stop: () => Promise<void> | void) => {
        try {
          await stop();
        } catch (error) {
          failures.push(error);
        }
      };
      await step(() => voice.stopCalls());
      // In-flight requests get a grace period; connections still open after it (a stalled client) are cut.
      const cut = setTimeout(() => server.server.closeAllConnections(), config.shutdownGraceMs);
      await step(() => server.close());
      clearTimeout(cut);
      await step(() => voice.close());
      await step(() => searchIndexMerger.stop());
      await step(() => invalidations.stop());
      await step(() => conversationRecall.stop());
      await step(() => notifier.close());
      await step(() => locks.close());
      await step(() => rateLimiter.close());
      if (!options.db) await step(() => db.close());
      logOutput?.close();
      if (failures.length > 0) throw failures[0];
    },
  };
}
