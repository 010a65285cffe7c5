import { Type, type Static } from "@sinclair/typebox";
import { valueError } from "../shared/errors.js";
import { MAX_TOOLS, MIN_TOOL_SECRET_LENGTH, normalizeTool, ToolDefinitionInput, type ToolDefinition } from "../tools/tool-definitions.js";

const KnowledgeEntry = Type.Object({
  question: Type.String({ minLength: 1, maxLength: 2000 }),
  answer: Type.String({ minLength: 1, maxLength: 8000 }),
});

const AnalysisField = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 64, pattern: "^[A-Za-z_][A-Za-z0-9_]*$" }),
  type: Type.Union([Type.Literal("boolean"), Type.Literal("string"), Type.Literal("number")]),
  description: Type.Optional(Type.String({ maxLength: 1000 })),
});

const SimulationCriterion = Type.Object({
  key: Type.String({ minLength: 1, maxLength: 64, pattern: "^[a-z][a-z0-9_]*$" }),
  description: Type.String({ minLength: 1, maxLength: 2000 }),
  required: Type.Optional(Type.Boolean()),
});

const VoiceAccount = Type.Object({
  id: Type.String({ format: "uuid" }),
  phone_numbers: Type.Array(Type.String({ minLength: 3, maxLength: 32 }), { minItems: 1, maxItems: 50 }),
});

const httpUrl = { maxLength: 2000, pattern: "^https?://" };

/** Flite's US English voices as Debian's flite ships them (docs/voice.md has the speech benchmark that chose `kal16`). */
export const FLITE_VOICES = ["kal16", "rms", "awb", "slt", "kal"] as const;
export type FliteVoice = (typeof FLITE_VOICES)[number];

const SpeechInput = Type.Object({
  stt: Type.Optional(
    Type.Object({
      provider: Type.Optional(Type.Union([Type.Literal("pocketsphinx"), Type.Literal("openai")])),
      language: Type.Optional(Type.String({ maxLength: 35, pattern: "^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$" })),
      base_url: Type.Optional(Type.String(httpUrl)),
      api_key: Type.Optional(Type.String({ maxLength: 500 })),
      model: Type.Optional(Type.String({ maxLength: 200 })),
      keywords: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 50 }), { maxItems: 100 })),
    }),
  ),
  tts: Type.Optional(
    Type.Object({
      provider: Type.Optional(Type.Union([Type.Literal("flite"), Type.Literal("espeak"), Type.Literal("openai")])),
      voice: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
      base_url: Type.Optional(Type.String(httpUrl)),
      api_key: Type.Optional(Type.String({ maxLength: 500 })),
      model: Type.Optional(Type.String({ maxLength: 200 })),
    }),
  ),
  end_of_turn_ms: Type.Optional(Type.Integer({ minimum: 200, maximum: 3000 })),
  min_end_of_turn_ms: Type.Optional(Type.Integer({ minimum: 100, maximum: 3000 })),
});

/** Which model the agent, or the simulated user, talks to: where, with which key. */
const ModelInput = {
  provider: Type.Optional(Type.Union([Type.Literal("builtin"), Type.Literal("openai"), Type.Literal("anthropic")])),
  model: Type.Optional(Type.String({ maxLength: 200 })),
  base_url: Type.Optional(Type.String(httpUrl)),
  api_key: Type.Optional(Type.String({ maxLength: 500 })),
};

/** The project configuration as an admin sends it; every key optional, defaults filled by `withDefaults`. */
export const ProjectConfigInput = Type.Object({
  agent: Type.Optional(
    Type.Object({
      ...ModelInput,
      system_prompt: Type.Optional(Type.String({ maxLength: 50_000 })),
      greeting: Type.Optional(Type.String({ maxLength: 4000 })),
      fallback: Type.Optional(Type.String({ maxLength: 4000 })),
      temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
      max_history_messages: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000 })),
      max_tokens: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
      followup_prompt: Type.Optional(Type.String({ maxLength: 10_000 })),
      summary_prompt: Type.Optional(Type.String({ maxLength: 10_000 })),
      knowledge: Type.Optional(Type.Array(KnowledgeEntry, { maxItems: 5000 })),
      tools: Type.Optional(Type.Array(ToolDefinitionInput, { maxItems: MAX_TOOLS })),
      tool_secret: Type.Optional(Type.String({ minLength: MIN_TOOL_SECRET_LENGTH, maxLength: 500 })),
    }),
  ),
  conversation: Type.Optional(Type.Object({ lock_on_end: Type.Optional(Type.Boolean()) })),
  pricing: Type.Optional(
    Type.Object({
      message_usd: Type.Optional(Type.Number({ minimum: 0, maximum: 1000 })),
      voice_minute_usd: Type.Optional(Type.Number({ minimum: 0, maximum: 1000 })),
    }),
  ),
  json_input: Type.Optional(Type.Object({ schema: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { dict: true })) })),
  speech: Type.Optional(SpeechInput),
  simulation: Type.Optional(
    Type.Object({
      ...ModelInput,
      temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
      criteria: Type.Optional(Type.Array(SimulationCriterion, { maxItems: 20 })),
    }),
  ),
  voice: Type.Optional(
    Type.Object({
      provider: Type.Optional(Type.Union([Type.Literal("simulated"), Type.Literal("twilio"), Type.Literal("retell")])),
      accounts: Type.Optional(Type.Array(VoiceAccount, { maxItems: 100 })),
      max_call_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 14_400 })),
      analysis_fields: Type.Optional(Type.Array(AnalysisField, { maxItems: 50 })),
      simulated: Type.Optional(
        Type.Object({
          script: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 2000 }), { maxItems: 200 })),
          ring_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 60_000 })),
          turn_ms: Type.Optional(Type.Integer({ minimum: 0, maximum: 60_000 })),
        }),
      ),
      twilio: Type.Optional(
        Type.Object({
          account_sid: Type.Optional(Type.String({ pattern: "^AC[0-9a-fA-F]{32}$" })),
          auth_token: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
          api_base_url: Type.Optional(Type.String({ maxLength: 2000, pattern: "^https?://" })),
        }),
      ),
      retell: Type.Optional(
        Type.Object({
          api_key: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
          agent_id: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
          api_base_url: Type.Optional(Type.String({ maxLength: 2000, pattern: "^https?://" })),
        }),
      ),
      inbound: Type.Optional(
        Type.Object({
          enabled: Type.Boolean(),
          greeting: Type.Optional(Type.String({ minLength: 1, maxLength: 2000 })),
          max_call_seconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 14_400 })),
        }),
      ),
    }),
  ),
});
export type ProjectConfigInput = Static<typeof ProjectConfigInput>;

export interface ProjectConfig {
  agent: {
    provider: "builtin" | "openai" | "anthropic";
    model: string;
    base_url: string;
    system_prompt: string;
    greeting: string;
    fallback: string;
    temperature: number;
    max_history_messages: number;
    max_tokens: number;
    followup_prompt: string;
    summary_prompt: string;
    knowledge: { question: string; answer: string }[];
    /** Absent from versions stored before tools existed. */
    tools?: ToolDefinition[];
  };
  conversation: { lock_on_end: boolean };
  pricing: { message_usd: number; voice_minute_usd: number };
  json_input: { schema?: Record<string, unknown> };
  speech: SpeechConfig;
  /**
   * Who plays the simulated user and the judge of `simulate` on POST /chat: `provider` null means the agent's own
   * provider, model and key; criteria add to the default ones.
   */
  simulation: {
    provider: "builtin" | "openai" | "anthropic" | null;
    model: string;
    base_url: string;
    temperature: number;
    criteria: { key: string; description: string; required: boolean }[];
  };
  voice: {
    provider: VoiceProviderName;
    accounts: { id: string; phone_numbers: string[] }[];
    max_call_seconds: number;
    analysis_fields: { name: string; type: "boolean" | "string" | "number"; description?: string }[];
    simulated: { script?: string[]; ring_ms: number; turn_ms: number };
    /** The vendors' settings without their credentials, which are project secrets (see `splitSecrets`). */
    twilio: { account_sid: string; api_base_url: string };
    retell: { agent_id: string; api_base_url: string };
    /** Whether the project answers calls to its numbers; absent from versions stored before inbound calls existed. */
    inbound?: InboundVoiceConfig;
  };
}

/** As configured: the greeting and the length limit fall back to the agent's greeting and `voice.max_call_seconds`. */
export interface InboundVoiceConfig {
  enabled: boolean;
  greeting?: string;
  max_call_seconds?: number;
}

/** How a project answers an inbound call, its fallbacks applied; `enabled` false (or an old version) answers none. */
export function inboundSettingsOf(config: ProjectConfig): { enabled: boolean; greeting: string; max_call_seconds: number } {
  const inbound = config.voice.inbound;
  return {
    enabled: inbound?.enabled ?? false,
    greeting: inbound?.greeting ?? config.agent.greeting,
    max_call_seconds: inbound?.max_call_seconds ?? config.voice.max_call_seconds,
  };
}

export const voiceProviderNames = ["simulated", "twilio", "retell"] as const;
export type VoiceProviderName = (typeof voiceProviderNames)[number];

/** Speech engines of a project's calls (see docs/voice.md); API keys are kept apart with the other secrets. */
export interface SpeechConfig {
  stt: { provider: "pocketsphinx" | "openai"; language: string; base_url: string; model: string; keywords: string[] };
  tts: { provider: "flite" | "espeak" | "openai"; voice: string; base_url: string; model: string };
  /** The longest silence after the caller's speech that ends their turn. */
  end_of_turn_ms: number;
  /** The silence that ends a turn whose words read as a complete sentence. */
  min_end_of_turn_ms: number;
}

const defaultVoices = { flite: "kal16", espeak: "en-us", openai: "alloy" } as const;

function speechWithDefaults(input: ProjectConfigInput["speech"]): SpeechConfig {
  const stt = input?.stt ?? {};
  const tts = input?.tts ?? {};
  const sttProvider = stt.provider ?? "pocketsphinx";
  const ttsProvider = tts.provider ?? "flite";
  return {
    stt: {
      provider: sttProvider,
      language: stt.language ?? "en-US",
      base_url: stt.base_url ?? (sttProvider === "openai" ? defaultBaseUrls.openai : ""),
      model: stt.model ?? (sttProvider === "openai" ? "whisper-1" : ""),
      keywords: stt.keywords ?? [],
    },
    tts: {
      provider: ttsProvider,
      voice: tts.voice ?? defaultVoices[ttsProvider],
      base_url: tts.base_url ?? (ttsProvider === "openai" ? defaultBaseUrls.openai : ""),
      model: tts.model ?? (ttsProvider === "openai" ? "tts-1" : ""),
    },
    end_of_turn_ms: input?.end_of_turn_ms ?? 500,
    min_end_of_turn_ms: input?.min_end_of_turn_ms ?? Math.min(200, input?.end_of_turn_ms ?? 500),
  };
}

const defaultBaseUrls = { builtin: "", openai: "https://api.openai.com/v1", anthropic: "https://api.anthropic.com" };

/** The stored (public) configuration with every default filled in. The provider key is kept apart: see `splitSecrets`. */
export function withDefaults(input: ProjectConfigInput): ProjectConfig {
  const agent = input.agent ?? {};
  const provider = agent.provider ?? "builtin";
  const voice = input.voice ?? {};
  const simulation = input.simulation ?? {};
  const simulationProvider = simulation.provider ?? null;
  return {
    agent: {
      provider,
      model: agent.model ?? (provider === "builtin" ? "builtin-retrieval-1" : ""),
      base_url: agent.base_url ?? defaultBaseUrls[provider],
      system_prompt: agent.system_prompt ?? "You are a helpful assistant.",
      greeting: agent.greeting ?? "Hello! How can I help you today?",
      fallback: agent.fallback ?? "I'm sorry, I don't have an answer to that yet.",
      temperature: agent.temperature ?? 0.7,
      max_history_messages: agent.max_history_messages ?? 40,
      max_tokens: agent.max_tokens ?? 1024,
      followup_prompt: agent.followup_prompt ?? "Follow up on the conversation with a short, helpful message.",
      summary_prompt: agent.summary_prompt ?? "Summarize the conversation in a few sentences.",
      knowledge: agent.knowledge ?? [],
      tools: (agent.tools ?? []).map(normalizeTool),
    },
    conversation: { lock_on_end: input.conversation?.lock_on_end ?? false },
    pricing: { message_usd: input.pricing?.message_usd ?? 0, voice_minute_usd: input.pricing?.voice_minute_usd ?? 0 },
    json_input: input.json_input?.schema ? { schema: input.json_input.schema } : {},
    speech: speechWithDefaults(input.speech),
    simulation: {
      provider: simulationProvider,
      model: simulation.model ?? (simulationProvider === "builtin" ? "builtin-persona-1" : ""),
      base_url: simulation.base_url ?? (simulationProvider ? defaultBaseUrls[simulationProvider] : ""),
      temperature: simulation.temperature ?? 0.7,
      criteria: (simulation.criteria ?? []).map((criterion) => ({ ...criterion, required: criterion.required ?? true })),
    },
    voice: {
      provider: voice.provider ?? "simulated",
      accounts: voice.accounts ?? [],
      max_call_seconds: voice.max_call_seconds ?? 600,
      analysis_fields: voice.analysis_fields ?? [],
      simulated: {
        ...(voice.simulated?.script ? { script: voice.simulated.script } : {}),
        ring_ms: voice.simulated?.ring_ms ?? 100,
        turn_ms: voice.simulated?.turn_ms ?? 200,
      },
      twilio: { account_sid: voice.twilio?.account_sid ?? "", api_base_url: trimSlash(voice.twilio?.api_base_url ?? "https://api.twilio.com") },
      retell: { agent_id: voice.retell?.agent_id ?? "", api_base_url: trimSlash(voice.retell?.api_base_url ?? "https://api.retellai.com") },
      inbound: inboundWithDefaults(voice.inbound),
    },
  };
}

function inboundWithDefaults(inbound: NonNullable<ProjectConfigInput["voice"]>["inbound"]): InboundVoiceConfig {
  if (!inbound) return { enabled: false };
  const { enabled, greeting, max_call_seconds: maxCallSeconds } = inbound;
  return { enabled, ...(greeting === undefined ? {} : { greeting }), ...(maxCallSeconds === undefined ? {} : { max_call_seconds: maxCallSeconds }) };
}

/** A version stored before the vendor settings existed has none: it gets their defaults (its provider is simulated). */
/**
 * A stored version with the speech settings added since it was saved: none at all (before speech existed), or no
 * keywords and no shorter end of turn. Its engines stay the ones it was saved with.
 */
export function withSpeechDefaults(config: ProjectConfig): ProjectConfig {
  const stored = config.speech as Partial<SpeechConfig> | undefined;
  if (!stored) return { ...config, speech: speechWithDefaults({}) };
  if (stored.stt?.keywords && stored.min_end_of_turn_ms !== undefined) return config;
  const endOfTurn = stored.end_of_turn_ms ?? 500;
  return {
    ...config,
    speech: { ...config.speech, stt: { ...config.speech.stt, keywords: stored.stt?.keywords ?? [] }, min_end_of_turn_ms: stored.min_end_of_turn_ms ?? Math.min(200, endOfTurn) },
  };
}

export function withVoiceVendorDefaults(config: ProjectConfig): ProjectConfig {
  if (config.voice.twilio && config.voice.retell) return config;
  const defaults = withDefaults({}).voice;
  return { ...config, voice: { ...config.voice, twilio: config.voice.twilio ?? defaults.twilio, retell: config.voice.retell ?? defaults.retell } };
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, "");
}

/** The write-only credentials of a configuration version, kept encrypted at rest. */
export interface ProjectSecrets {
  agentApiKey?: string;
  sttApiKey?: string;
  ttsApiKey?: string;
  simulationApiKey?: string;
  twilioAuthToken?: string;
  retellApiKey?: string;
  /** Signs the requests of the agent's http tools. */
  toolSecret?: string;
}

/** The credentials a configuration sends, and the public rest; a credential it leaves out is not in `secrets`. */
export function splitSecrets(input: ProjectConfigInput): { config: ProjectConfig; secrets: ProjectSecrets } {
  const config = withDefaults(input);
  const secrets: ProjectSecrets = {};
  if (input.agent?.api_key) secrets.agentApiKey = input.agent.api_key;
  if (input.agent?.tool_secret) secrets.toolSecret = input.agent.tool_secret;
  if (input.simulation?.api_key) secrets.simulationApiKey = input.simulation.api_key;
  if (input.voice?.twilio?.auth_token) secrets.twilioAuthToken = input.voice.twilio.auth_token;
  if (input.voice?.retell?.api_key) secrets.retellApiKey = input.voice.retell.api_key;
  if (input.speech?.stt?.api_key) secrets.sttApiKey = input.speech.stt.api_key;
  if (input.speech?.tts?.api_key) secrets.ttsApiKey = input.speech.tts.api_key;
  return { config, secrets };
}

/** The agent's tools; versions stored before tools existed have none. */
export function toolsOf(agent: ProjectConfig["agent"]): ToolDefinition[] {
  return agent.tools ?? [];
}

/** The criteria every simulation is judged by; a project's `simulation.criteria` add to them. */
export const DEFAULT_SIMULATION_CRITERIA: readonly { key: string; description: string; required: boolean }[] = [
  { key: "task_completion", description: "The agent helped the user with what they came for: each request got a substantive answer.", required: true },
  { key: "stays_on_topic", description: "The agent's replies stay on the conversation's topic and answer what the user asked.", required: true },
  { key: "no_repetition", description: "The agent does not repeat a reply it already gave.", required: true },
];

/** Versions stored before simulations existed have no `simulation` section: they get its defaults. */
export function simulationSettingsOf(config: ProjectConfig): ProjectConfig["simulation"] {
  return (config as Partial<ProjectConfig>).simulation ?? withDefaults({}).simulation;
}

/** A criterion's key names it in every evaluation: unique, and not one of the default criteria it would shadow. */
export function checkSimulationCriteria(input: ProjectConfigInput): void {
  const seen = new Set(DEFAULT_SIMULATION_CRITERIA.map((criterion) => criterion.key));
  for (const [index, criterion] of (input.simulation?.criteria ?? []).entries()) {
    if (seen.has(criterion.key)) {
      throw valueError(
        ["body", "config", "simulation", "criteria", index, "key"],
        `criterion key '${criterion.key}' is already used (by a default criterion or an earlier entry)`,
        criterion.key,
      );
    }
    seen.add(criterion.key);
  }
}
