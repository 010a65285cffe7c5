import path from "node:path";
import type { VoiceSettings } from "./domain/calls/voice-settings.js";
import type { S3Location } from "./store/recording-objects.js";

/** Every setting, parsed and validated once at start. */
export interface Config {
  port: number;
  host: string;
  dataDir: string;
  databaseUrl: string | undefined;
  databasePoolSize: number;
  adminApiKey: string | undefined;
  jwtSecret: string | undefined;
  encryptionKey: string | undefined;
  threadTokenTtlSeconds: number;
  legacyBasePath: string;
  logLevel: string;
  providerTimeoutMs: number;
  bodyLimitBytes: number;
  recordingUrlTtlSeconds: number;
  /** Where call recordings are kept: files under DATA_DIR/recordings (the default), or S3-compatible object storage. */
  recordings: { kind: "folder" } | ({ kind: "s3" } & S3Location);
  publicBaseUrl: string | undefined;
  /** Whether `X-Forwarded-Host` / `X-Forwarded-Proto` come from a proxy of the operator's and may shape links. */
  trustProxyHeaders: boolean;
  shutdownGraceMs: number;
  redisUrl: string | undefined;
  rateLimitPerKeyPerMinute: number;
  rateLimitPerOrganizationPerMinute: number;
  /** Memory for rendered history pages, in MiB; 0 turns the page cache off. */
  historyCacheMb: number;
  /** API keys kept in memory after a lookup; 0 turns the credential cache off. */
  credentialCacheKeys: number;
  /** Memory for what chat turns read of their thread and project, in MiB; 0 turns that cache off. */
  chatSetupCacheMb: number;
  /** Memory for the conversations this instance's last turns left, from which a streamed turn guesses its history (0: never guess). */
  chatRecallMb: number;
  /** Thread events older than this are deleted; 0 keeps them. */
  eventsRetentionHours: number;
  /** Client-side HTTP timeouts: headers received, whole request received, idle keep-alive connection. */
  httpTimeouts: { headersMs: number; requestMs: number; keepAliveMs: number };
  /** How long a cached page or key may be served at most: the bound on staleness should a notification be lost. */
  cacheMaxAgeMs: number;
  /** How often each instance merges the trigram search index's pending list into the index (store/search-index-merger.ts). */
  searchIndexIntervalMs: number;
  /** How often freed C memory is handed back to the system (0: never); see src/process-memory.ts. */
  memoryTrimIntervalMs: number;
  /** Whether the agent's tools may call receivers on loopback, private or link-local addresses (tests, trusted networks). */
  toolsAllowPrivateNetworks: boolean;
  voice: VoiceSettings;
}

export class ConfigError extends Error {}

function speechMode(env: Record<string, string | undefined>): "audio" | "text" {
  const mode = env["SPEECH_MODE"] ?? "audio";
  if (mode !== "audio" && mode !== "text") throw new ConfigError("SPEECH_MODE must be audio or text");
  return mode;
}

type Env = Record<string, string | undefined>;

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === "") return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

function optional(env: Env, name: string): string | undefined {
  const raw = env[name];
  return raw === undefined || raw === "" ? undefined : raw;
}

function flag(env: Env, name: string): boolean {
  const raw = optional(env, name);
  if (raw === undefined) return false;
  if (!["true", "false", "1", "0"].includes(raw)) throw new ConfigError(`${name} must be true or false, got "${raw}"`);
  return raw === "true" || raw === "1";
}

/** PUBLIC_BASE_URL: an absolute http(s) URL that a path can be appended to. */
function publicBaseUrl(env: Env): string | undefined {
  const raw = optional(env, "PUBLIC_BASE_URL");
  if (raw === undefined) {
    // In production a link's host must not depend on what a client puts in its Host header.
    if (env.NODE_ENV === "production") throw new ConfigError("with NODE_ENV=production, PUBLIC_BASE_URL must be set (the address clients and vendors reach Parley at)");
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(`PUBLIC_BASE_URL must be an absolute http(s) URL such as https://parley.example.com, got "${raw}"`);
  }
  if (!["http:", "https:"].includes(url.protocol) || url.search !== "" || url.hash !== "" || url.username !== "" || url.password !== "") {
    throw new ConfigError(`PUBLIC_BASE_URL must be an http(s) URL without credentials, query or fragment, got "${raw}"`);
  }
  return raw;
}

/**
 * RECORDINGS_URL=s3://bucket/prefix and the RECORDINGS_S3_* settings. Credentials are secrets: no message quotes
 * them, nor a URL that carries any.
 */
export function recordingsLocation(env: Env): Config["recordings"] {
  const raw = optional(env, "RECORDINGS_URL");
  const endpointRaw = optional(env, "RECORDINGS_S3_ENDPOINT");
  const accessKeyId = optional(env, "RECORDINGS_S3_ACCESS_KEY_ID");
  const secretAccessKey = optional(env, "RECORDINGS_S3_SECRET_ACCESS_KEY");
  if (raw === undefined) {
    for (const name of ["RECORDINGS_S3_ENDPOINT", "RECORDINGS_S3_REGION", "RECORDINGS_S3_ACCESS_KEY_ID", "RECORDINGS_S3_SECRET_ACCESS_KEY", "RECORDINGS_S3_FORCE_PATH_STYLE"]) {
      if (optional(env, name) !== undefined) throw new ConfigError(`${name} is set but RECORDINGS_URL is not: set RECORDINGS_URL=s3://bucket/prefix to keep recordings in object storage`);
    }
    return { kind: "folder" };
  }
  const shape = "RECORDINGS_URL must be s3://bucket or s3://bucket/prefix (credentials go in RECORDINGS_S3_ACCESS_KEY_ID and RECORDINGS_S3_SECRET_ACCESS_KEY)";
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(shape);
  }
  const bucket = url.hostname;
  if (url.protocol !== "s3:" || url.username !== "" || url.password !== "" || url.port !== "" || url.search !== "" || url.hash !== "") throw new ConfigError(shape);
  // S3's bucket naming rules, which R2, MinIO and GCS share.
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket) || bucket.includes("..")) {
    throw new ConfigError(`RECORDINGS_URL names the bucket "${bucket}": a bucket name is 3 to 63 lowercase letters, digits, dots and hyphens`);
  }
  let prefix: string;
  try {
    prefix = decodeURIComponent(url.pathname).replace(/^\/+|\/+$/g, "");
  } catch {
    throw new ConfigError(shape);
  }
  let endpoint: string | undefined;
  if (endpointRaw !== undefined) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(endpointRaw);
    } catch {
      parsed = undefined;
    }
    if (!parsed || !["http:", "https:"].includes(parsed.protocol) || parsed.username !== "" || parsed.password !== "" || parsed.search !== "" || parsed.hash !== "") {
      throw new ConfigError("RECORDINGS_S3_ENDPOINT must be an http(s) URL without credentials, such as https://ACCOUNT.r2.cloudflarestorage.com");
    }
    endpoint = endpointRaw;
  }
  if ((accessKeyId === undefined) !== (secretAccessKey === undefined)) {
    throw new ConfigError("RECORDINGS_S3_ACCESS_KEY_ID and RECORDINGS_S3_SECRET_ACCESS_KEY go together: set both, or neither to use the AWS SDK's own credentials (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, an instance role)");
  }
  return {
    kind: "s3",
    bucket,
    prefix: prefix === "" ? "" : `${prefix}/`,
    endpoint,
    region: optional(env, "RECORDINGS_S3_REGION") ?? optional(env, "AWS_REGION") ?? "us-east-1",
    // Path-style addressing is what self-hosted stores (MinIO) need; AWS itself wants virtual-hosted buckets.
    forcePathStyle: optional(env, "RECORDINGS_S3_FORCE_PATH_STYLE") === undefined ? endpoint !== undefined : flag(env, "RECORDINGS_S3_FORCE_PATH_STYLE"),
    credentials: accessKeyId !== undefined && secretAccessKey !== undefined ? { accessKeyId, secretAccessKey } : undefined,
  };
}

function secret(env: Env, name: string, minLength: number): string | undefined {
  const value = optional(env, name);
  if (value !== undefined && value.length < minLength) {
    throw new ConfigError(`${name} must be at least ${minLength} characters long`);
  }
  return value;
}

export function loadConfig(env: Env = process.env): Config {
  const databaseUrl = optional(env, "DATABASE_URL");
  if (databaseUrl !== undefined && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError(`DATABASE_URL must start with postgres:// or postgresql://`);
  }
  const legacyBasePath = optional(env, "LEGACY_BASE_PATH") ?? "/legacy";
  if (!/^\/[A-Za-z0-9._~\-/]*[A-Za-z0-9._~-]$/.test(legacyBasePath)) {
    throw new ConfigError(`LEGACY_BASE_PATH must be a path such as /legacy, got "${legacyBasePath}"`);
  }
  const jwtSecret = secret(env, "JWT_SECRET", 32);
  const encryptionKey = secret(env, "ENCRYPTION_KEY", 32);
  if (databaseUrl !== undefined && (jwtSecret === undefined || encryptionKey === undefined)) {
    throw new ConfigError(
      "with DATABASE_URL set, JWT_SECRET and ENCRYPTION_KEY must be set too (32+ characters each), " +
        "so that every instance signs tokens and encrypts provider keys alike",
    );
  }
  const redisUrl = optional(env, "REDIS_URL");
  if (redisUrl !== undefined && !/^rediss?:\/\//.test(redisUrl)) throw new ConfigError("REDIS_URL must start with redis:// or rediss://");
  const logLevel = optional(env, "LOG_LEVEL") ?? "info";
  if (!["fatal", "error", "warn", "info", "debug", "trace", "silent"].includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of fatal, error, warn, info, debug, trace, silent`);
  }
  return {
    port: integer(env, "PORT", 8000, 0, 65535),
    host: optional(env, "HOST") ?? "0.0.0.0",
    dataDir: path.resolve(optional(env, "DATA_DIR") ?? "./data"),
    databaseUrl,
    databasePoolSize: integer(env, "DATABASE_POOL_SIZE", 20, 1, 1000),
    adminApiKey: secret(env, "ADMIN_API_KEY", 16),
    jwtSecret,
    encryptionKey,
    threadTokenTtlSeconds: integer(env, "THREAD_TOKEN_TTL_SECONDS", 3600, 1, 31 * 24 * 3600),
    legacyBasePath,
    logLevel,
    providerTimeoutMs: integer(env, "PROVIDER_TIMEOUT_MS", 60_000, 100, 600_000),
    bodyLimitBytes: integer(env, "BODY_LIMIT_BYTES", 1_048_576, 1024, 100 * 1_048_576),
    recordingUrlTtlSeconds: integer(env, "RECORDING_URL_TTL_SECONDS", 600, 1, 7 * 24 * 3600),
    recordings: recordingsLocation(env),
    publicBaseUrl: publicBaseUrl(env),
    trustProxyHeaders: flag(env, "TRUST_PROXY_HEADERS"),
    shutdownGraceMs: integer(env, "SHUTDOWN_GRACE_MS", 10_000, 0, 600_000),
    redisUrl,
    rateLimitPerKeyPerMinute: integer(env, "RATE_LIMIT_PER_KEY_PER_MINUTE", 0, 0, 10_000_000),
    rateLimitPerOrganizationPerMinute: integer(env, "RATE_LIMIT_PER_ORG_PER_MINUTE", 0, 0, 100_000_000),
    historyCacheMb: integer(env, "HISTORY_CACHE_MB", 64, 0, 1_048_576),
    credentialCacheKeys: integer(env, "CREDENTIAL_CACHE_KEYS", 10_000, 0, 100_000_000),
    chatSetupCacheMb: integer(env, "CHAT_SETUP_CACHE_MB", 16, 0, 1_048_576),
    chatRecallMb: integer(env, "CHAT_RECALL_MB", 16, 0, 1_048_576),
    cacheMaxAgeMs: integer(env, "CACHE_MAX_AGE_MS", 5_000, 1, 3_600_000),
    searchIndexIntervalMs: integer(env, "SEARCH_INDEX_INTERVAL_MS", 200, 10, 60_000),
    memoryTrimIntervalMs: integer(env, "MEMORY_TRIM_INTERVAL_MS", 5_000, 0, 3_600_000),
    eventsRetentionHours: integer(env, "EVENTS_RETENTION_HOURS", 168, 0, 1_000_000),
    toolsAllowPrivateNetworks: flag(env, "TOOLS_ALLOW_PRIVATE_NETWORKS"),
    httpTimeouts: {
      headersMs: integer(env, "HTTP_HEADERS_TIMEOUT_MS", 60_000, 100, 3_600_000),
      requestMs: integer(env, "HTTP_REQUEST_TIMEOUT_MS", 120_000, 100, 3_600_000),
      // Above the usual 60 s of load balancers, so that the balancer closes idle connections first.
      keepAliveMs: integer(env, "HTTP_KEEP_ALIVE_TIMEOUT_MS", 72_000, 100, 3_600_000),
    },
    voice: {
      webCallJoinTimeoutMs: integer(env, "WEB_CALL_JOIN_TIMEOUT_MS", 30_000, 100, 600_000),
      heartbeatMs: integer(env, "CALL_HEARTBEAT_MS", 5_000, 100, 600_000),
      staleAfterMs: integer(env, "CALL_STALE_AFTER_MS", 30_000, 500, 3_600_000),
      socketPingMs: integer(env, "WEBSOCKET_PING_MS", 15_000, 100, 600_000),
      speechMode: speechMode(env),
      sttWorkers: integer(env, "SPEECH_STT_WORKERS", 8, 1, 64),
      ttsWorkers: integer(env, "SPEECH_TTS_WORKERS", 2, 1, 64),
      // pg-boss polls every half second at the fastest.
      schedulerPollSeconds: integer(env, "CALL_SCHEDULER_POLL_MS", 500, 500, 60_000) / 1000,
      vendorTimeoutMs: integer(env, "VOICE_VENDOR_TIMEOUT_MS", 10_000, 100, 120_000),
      vendorSocketGraceMs: integer(env, "VOICE_VENDOR_SOCKET_GRACE_MS", 2_000, 0, 60_000),
      recordWaitMs: integer(env, "CALL_RECORD_WAIT_MS", 15_000, 100, 600_000),
      lengthGraceMs: integer(env, "CALL_LENGTH_GRACE_MS", 5_000, 0, 600_000),
    },
  };
}
