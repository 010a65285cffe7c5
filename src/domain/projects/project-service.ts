import type { Db } from "../shared/database.js";
import type { ConfigVersionRecord, ProjectRecord, ProjectsRepository } from "./projects-repository.js";
import { ConflictError, NotFoundError, valueError } from "../shared/errors.js";
import { uuidv7 } from "../shared/ids.js";
import { checkJsonSchema } from "../shared/json-schema.js";
import { checkSimulationCriteria, simulationSettingsOf, splitSecrets, withDefaults, type ProjectConfig, type ProjectConfigInput, type ProjectSecrets } from "./project-config.js";
import type { SecretBox } from "../access/secrets.js";
import { ESPEAK_VOICE_PATTERN } from "./speech-voices.js";

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
    agent: { api_key_set: boolean };
    simulation: { api_key_set: boolean };
    speech: { stt: { api_key_set: boolean }; tts: { api_key_set: boolean } };
  };
  versions: { id: string; version: number; created_at: string }[];
}

/** Projects and their immutable configuration versions; versions are cached since they never change. */
export class ProjectService {
  private readonly versionCache = new Map<string, ProjectConfig>();
  private readonly secretCache = new Map<string, ProjectSecrets>();
  private readonly publishListeners: ((organizationId: string) => void)[] = [];

  constructor(
    private readonly db: Db,
    private readonly store: ProjectsRepository,
    private readonly secretBox: SecretBox,
  ) {}

  async create(organizationId: string, name: string, input: ProjectConfigInput): Promise<{ id: string; name: string; config_version_id: string }> {
    const { config, encryptedSecrets } = this.prepare(input, null);
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
    const { config, encryptedSecrets } = this.prepare(input, current?.encrypted_secrets ?? null);
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
    return {
      id: project.id,
      organization_id: project.organization_id,
      name: project.name,
      config_version_id: current.id,
      config: this.publicConfig(current),
      versions: versions.map((v) => ({ id: v.id, version: v.version, created_at: v.created_at.toISOString() })),
    };
  }

  async findByName(organizationId: string, name: string): Promise<ProjectRecord | undefined> {
    return this.store.findByName(organizationId, name);
  }

  async findById(organizationId: string, id: string): Promise<ProjectRecord | undefined> {
    return this.store.findById(id, organizationId);
  }

  /** The project's current version, or the version asked for (not found when it is not one of this project's). */
  /** The organization's project `projectId` with its configuration (the current version unless one is named). */
  async resolveById(organizationId: string, projectId: string, configVersionId?: string): Promise<ResolvedProject> {
    const project = await this.findById(organizationId, projectId);
    if (!project) throw new NotFoundError("Project not found");
    return this.resolve(project, configVersionId);
  }

  async resolve(project: ProjectRecord, configVersionId?: string): Promise<ResolvedProject> {
    const versionId = configVersionId ?? project.current_config_version_id;
    const cached = this.versionCache.get(versionId);
    if (cached) return { project, configVersionId: versionId, config: cached, secrets: this.secretCache.get(versionId) ?? {} };
    const version = /^[0-9a-f-]{36}$/i.test(versionId) ? await this.store.findVersion(project.id, versionId) : undefined;
    if (!version) throw new NotFoundError("Configuration version not found");
    const secrets = this.openSecrets(version);
    // Versions stored before speech settings existed have none: they run on the defaults.
    const config = version.config.speech ? version.config : { ...version.config, speech: withDefaults({}).speech };
    this.versionCache.set(versionId, config);
    this.secretCache.set(versionId, secrets);
    return { project, configVersionId: versionId, config, secrets };
  }

  private publicConfig(version: ConfigVersionRecord): ProjectView["config"] {
    const secrets = this.openSecrets(version);
    const { config } = version;
    // Versions stored before speech settings existed have none: they run on the defaults.
    const speech = config.speech ?? withDefaults({}).speech;
    return {
      ...config,
      agent: { ...config.agent, api_key_set: secrets.agentApiKey !== undefined },
      simulation: { ...simulationSettingsOf(config), api_key_set: secrets.simulationApiKey !== undefined },
      speech: {
        ...speech,
        stt: { ...speech.stt, api_key_set: secrets.sttApiKey !== undefined },
        tts: { ...speech.tts, api_key_set: secrets.ttsApiKey !== undefined },
      },
    };
  }

  private openSecrets(version: ConfigVersionRecord): ProjectSecrets {
    return version.encrypted_secrets ? (JSON.parse(this.secretBox.open(version.encrypted_secrets)) as ProjectSecrets) : {};
  }

  private prepare(input: ProjectConfigInput, previousSecrets: string | null): { config: ProjectConfig; encryptedSecrets: string | null } {
    const schema = input.json_input?.schema;
    if (schema) {
      const problem = checkJsonSchema(schema);
      if (problem) throw valueError(["body", "config", "json_input", "schema"], `not a valid JSON Schema: ${problem}`, schema);
    }
    checkSimulationCriteria(input);
    const tts = input.speech?.tts;
    if (tts?.voice !== undefined && (tts.provider ?? "espeak") === "espeak" && !new RegExp(ESPEAK_VOICE_PATTERN).test(tts.voice)) {
      throw valueError(["body", "config", "speech", "tts", "voice"], "not an eSpeak NG voice (language[+variant], e.g. en-us or en-us+f3)", tts.voice);
    }
    const { config, secrets } = splitSecrets(input);
    if (Object.keys(secrets).length === 0) return { config, encryptedSecrets: previousSecrets };
    // Keys are write-only: a version that sets one of them keeps the others of the version before.
    const previous = previousSecrets ? (JSON.parse(this.secretBox.open(previousSecrets)) as ProjectSecrets) : {};
    return { config, encryptedSecrets: this.secretBox.seal(JSON.stringify({ ...previous, ...secrets })) };
  }
}
