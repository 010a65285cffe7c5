import type { Db } from "../shared/database.js";
import type { ConfigVersionRecord, ProjectRecord, ProjectsRepository } from "./projects-repository.js";
import { ConflictError, NotFoundError, valueError } from "../shared/errors.js";
import { uuidv7 } from "../shared/ids.js";
import { checkJsonSchema } from "../shared/json-schema.js";
import { checkSimulationCriteria, FLITE_VOICES, simulationSettingsOf, splitSecrets, toolsOf, withDefaults, withSpeechDefaults, withVoiceVendorDefaults, type ProjectConfig, type ProjectConfigInput, type ProjectSecrets, type VoiceProviderName } from "./project-config.js";
import type { SecretBox } from "../access/secrets.js";
import { ESPEAK_VOICE_PATTERN } from "./speech-voices.js";

/** What the speech settings' schema cannot say alone: a voice of the engine named, and end-of-turn bounds in order. */
function checkSpeech(speech: ProjectConfigInput["speech"]): void {
  const tts = speech?.tts;
  const provider = tts?.provider ?? "flite";
  if (tts?.voice !== undefined && provider === "espeak" && !new RegExp(ESPEAK_VOICE_PATTERN).test(tts.voice)) {
    throw valueError(["body", "config", "speech", "tts", "voice"], "not an eSpeak NG voice (language[+variant], e.g. en-us or en-us+f3)", tts.voice);
  }
  if (tts?.voice !== undefined && provider === "flite" && !(FLITE_VOICES as readonly string[]).includes(tts.voice)) {
    throw valueError(["body", "config", "speech", "tts", "voice"], `not a flite voice (one of ${FLITE_VOICES.join(", ")})`, tts.voice);
  }
  const longest = speech?.end_of_turn_ms ?? 500;
  if (speech?.min_end_of_turn_ms !== undefined && speech.min_end_of_turn_ms > longest) {
    throw valueError(["body", "config", "speech", "min_end_of_turn_ms"], `must not exceed end_of_turn_ms (${longest})`, speech.min_end_of_turn_ms);
  }
}
import { checkToolDefinitions } from "../tools/tool-definitions.js";

export interface ResolvedProject {
  project: ProjectRecord;
  configVersionId: string;
  config: ProjectConfig;
  secrets: ProjectSecrets;
}

export interface ProjectView {
  id: string;
  organization_id: string;
  name: string;
  config_version_id: string;
  config: ProjectConfig & {
    agent: { api_key_set: boolean; tool_secret_set: boolean };
    simulation: { api_key_set: boolean };
    voice: { twilio: { auth_token_set: boolean }; retell: { api_key_set: boolean } };
    speech: { stt: { api_key_set: boolean }; tts: { api_key_set: boolean } };
  };
  versions: { id: string; version: number; created_at: string }[];
}

export interface ConfigVersionView {
  id: string;
  project_id: string;
  version: number;
  created_at: string;
  current: boolean;
  config: ProjectView["config"];
}

/** A version as cached: its configuration and its opened credentials. */
interface CachedVersion {
  config: ProjectConfig;
  secrets: ProjectSecrets;
}

/**
 * Projects and their immutable configuration versions; versions are cached since they never change, keyed by the
 * organization, the project and the version, so that a version id sent with another project (or by another
 * organization) never finds this one in the cache.
 */
export class ProjectService {
  private readonly versionCache = new Map<string, CachedVersion>();
  private readonly publishListeners: ((organizationId: string) => void)[] = [];

  constructor(
    private readonly db: Db,
    private readonly store: ProjectsRepository,
    private readonly secretBox: SecretBox,
  ) {}

  async create(organizationId: string, name: string, input: ProjectConfigInput): Promise<{ id: string; name: string; config_version_id: string }> {
    const { config, encryptedSecrets } = this.prepare(input, {});
    const id = uuidv7();
    const versionId = uuidv7();
    const created = await this.db.transaction((tx) =>
      this.store.create({ id, organizationId, name }, { id: versionId, config, encryptedSecrets }, tx),
    );
    if (!created) throw new ConflictError(`A project named "${name}" already exists`);
    return { id, name, config_version_id: versionId };
  }

  /** Told, after the commit, of each new current version (which may change `is_locked` across the organization). */
  onPublish(listener: (organizationId: string) => void): void {
    this.publishListeners.push(listener);
  }

  /** A new version without `agent.api_key` keeps the key of the current version (keys are write-only). */
  async publish(projectId: string, input: ProjectConfigInput): Promise<{ config_version_id: string }> {
    const project = await this.store.findById(projectId);
    if (!project) throw new NotFoundError("Project not found");
    const current = await this.store.findVersion(project.id, project.current_config_version_id);
    const { config, encryptedSecrets } = this.prepare(input, current ? this.openSecrets(current) : {});
    const versionId = uuidv7();
    await this.db.transaction((tx) => this.store.addVersion(project.id, { id: versionId, config, encryptedSecrets }, tx));
    for (const listener of this.publishListeners) listener(project.organization_id);
    return { config_version_id: versionId };
  }

  async view(projectId: string): Promise<ProjectView> {
    const project = await this.store.findById(projectId);
    if (!project) throw new NotFoundError("Project not found");
    const current = await this.store.findVersion(project.id, project.current_config_version_id);
    if (!current) throw new NotFoundError("Project not found");
    const versions = await this.store.listVersionIds(project.id);
    const secrets = this.openSecrets(current);
    return {
      id: project.id,
      organization_id: project.organization_id,
      name: project.name,
      config_version_id: current.id,
      config: publicView(withVoiceVendorDefaults(current.config), secrets),
      versions: versions.map((v) => ({ id: v.id, version: v.version, created_at: v.created_at.toISOString() })),
    };
  }

  /** One configuration version of the project as the admin interface shows configurations (credentials only as set or not). */
  async viewVersion(projectId: string, versionId: string): Promise<ConfigVersionView> {
    const project = await this.store.findById(projectId);
    if (!project) throw new NotFoundError("Project not found");
    const version = await this.store.findVersion(project.id, versionId);
    if (!version) throw new NotFoundError("Configuration version not found");
    return {
      id: version.id,
      project_id: project.id,
      version: version.version,
      created_at: version.created_at.toISOString(),
      current: version.id === project.current_config_version_id,
      config: publicView(withVoiceVendorDefaults(version.config), this.openSecrets(version)),
    };
  }

  async findByName(organizationId: string, name: string): Promise<ProjectRecord | undefined> {
    return this.store.findByName(organizationId, name);
  }

  async findById(organizationId: string, id: string): Promise<ProjectRecord | undefined> {
    return this.store.findById(id, organizationId);
  }

  /** The organization's project `projectId` with its configuration (the current version unless one is named). */
  async resolveById(organizationId: string, projectId: string, configVersionId?: string): Promise<ResolvedProject> {
    const project = await this.findById(organizationId, projectId);
    if (!project) throw new NotFoundError("Project not found");
    return this.resolve(project, configVersionId);
  }

  /**
   * The projects, of any organization, that hold `number` in their voice accounts and whose voice provider is
   * `provider`, each with its current version: the number a vendor's caller dialed says whose call it is, and the
   * vendor's request is then checked against each one's credentials.
   */
  async findByPhoneNumber(provider: string, number: string): Promise<ResolvedProject[]> {
    const digits = number.replace(/\D/g, "");
    if (digits === "") return [];
    return Promise.all((await this.store.findByPhoneNumber(provider, digits)).map((project) => this.resolve(project)));
  }

  /** The project's current version, or the version asked for (not found when it is not one of this project's). */
  async resolve(project: ProjectRecord, configVersionId?: string): Promise<ResolvedProject> {
    const versionId = configVersionId ?? project.current_config_version_id;
    const cacheKey = `${project.organization_id}/${project.id}/${versionId}`;
    const cached = this.versionCache.get(cacheKey);
    if (cached) return { project, configVersionId: versionId, ...cached };
    const version = /^[0-9a-f-]{36}$/i.test(versionId) ? await this.store.findVersion(project.id, versionId) : undefined;
    if (!version) throw new NotFoundError("Configuration version not found");
    const secrets = this.openSecrets(version);
    const config = withSpeechDefaults(withVoiceVendorDefaults(version.config));
    this.versionCache.set(cacheKey, { config, secrets });
    return { project, configVersionId: versionId, config, secrets };
  }

  private openSecrets(version: ConfigVersionRecord): ProjectSecrets {
    return version.encrypted_secrets ? (JSON.parse(this.secretBox.open(version.encrypted_secrets)) as ProjectSecrets) : {};
  }

  /** Each credential the new version leaves out is kept from the current version (credentials are write-only). */
  private prepare(input: ProjectConfigInput, previousSecrets: ProjectSecrets): { config: ProjectConfig; encryptedSecrets: string | null } {
    const schema = input.json_input?.schema;
    if (schema) {
      const problem = checkJsonSchema(schema);
      if (problem) throw valueError(["body", "config", "json_input", "schema"], `not a valid JSON Schema: ${problem}`, schema);
    }
    checkSimulationCriteria(input);
    checkToolDefinitions(input.agent, previousSecrets.toolSecret !== undefined);
    checkSpeech(input.speech);
    const { config, secrets: given } = splitSecrets(input);
    const secrets: ProjectSecrets = { ...previousSecrets, ...given };
    checkVoiceVendor(config, secrets);
    return { config, encryptedSecrets: Object.keys(secrets).length > 0 ? this.secretBox.seal(JSON.stringify(secrets)) : null };
  }
}

/** The configuration as the admin interface shows it: each credential only as whether it is set. */
function publicView(config: ProjectConfig, secrets: ProjectSecrets): ProjectView["config"] {
  // Versions stored before speech settings existed have none: they run on the defaults.
  const speech = config.speech ?? withDefaults({}).speech;
  return {
    ...config,
    agent: { ...config.agent, tools: toolsOf(config.agent), api_key_set: secrets.agentApiKey !== undefined, tool_secret_set: secrets.toolSecret !== undefined },
    simulation: { ...simulationSettingsOf(config), api_key_set: secrets.simulationApiKey !== undefined },
    speech: {
      ...speech,
      stt: { ...speech.stt, api_key_set: secrets.sttApiKey !== undefined },
      tts: { ...speech.tts, api_key_set: secrets.ttsApiKey !== undefined },
    },
    voice: {
      ...config.voice,
      twilio: { ...config.voice.twilio, auth_token_set: secrets.twilioAuthToken !== undefined },
      retell: { ...config.voice.retell, api_key_set: secrets.retellApiKey !== undefined },
    },
  };
}

/** The account settings each voice provider needs, or no call could ever be placed through it. */
const requiredVoiceSettings: Record<VoiceProviderName, { path: [string, string]; isSet: (config: ProjectConfig, secrets: ProjectSecrets) => boolean }[]> = {
  simulated: [],
  twilio: [
    { path: ["twilio", "account_sid"], isSet: (config) => Boolean(config.voice.twilio.account_sid) },
    { path: ["twilio", "auth_token"], isSet: (_config, secrets) => Boolean(secrets.twilioAuthToken) },
  ],
  retell: [
    { path: ["retell", "agent_id"], isSet: (config) => Boolean(config.voice.retell.agent_id) },
    { path: ["retell", "api_key"], isSet: (_config, secrets) => Boolean(secrets.retellApiKey) },
  ],
};

/** A vendor chosen as the voice provider needs its account settings. */
function checkVoiceVendor(config: ProjectConfig, secrets: ProjectSecrets): void {
  const provider = config.voice.provider;
  for (const setting of requiredVoiceSettings[provider]) {
    if (!setting.isSet(config, secrets)) throw valueError(["body", "config", "voice", ...setting.path], `required when voice.provider is ${provider}`, null);
  }
  const answersNumbers = config.voice.accounts.some((account) => account.phone_numbers.length > 0);
  if (config.voice.inbound?.enabled && !answersNumbers) {
    throw valueError(["body", "config", "voice", "inbound", "enabled"], "an inbound project needs a phone number in voice.accounts to answer", true);
  }
}
