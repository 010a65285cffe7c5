import type { ThreadRecord, ThreadsRepository } from "./threads-repository.js";
import { ConflictError, NotFoundError, valueError } from "../shared/errors.js";
import { uuidv7 } from "../shared/ids.js";
import { jsonSchemaProblem, maxJsonDepth, nestedDeeperThan } from "../shared/json-schema.js";
import type { ProjectService } from "../projects/project-service.js";
import type { ThreadTokens } from "../access/thread-tokens.js";

export interface ThreadUsage {
  billable_messages: number;
  billable_message_cost: number;
  voice_minutes: number;
  voice_cost: number;
  total_cost: number;
}

export interface ThreadView {
  id: string;
  alias: string | null;
  timezone: string;
  usage: ThreadUsage;
}

export interface CreateThreadInput {
  type: "NORMAL" | "SIMULATION";
  timezone: string;
  project_name?: string;
  json_input?: string;
  alias?: string;
}

export function isKnownTimezone(name: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

/** Costs are kept as exact decimals in the database; rounding to 8 places removes float noise when read. */
function money(decimal: string): number {
  return Math.round(Number(decimal) * 1e8) / 1e8;
}

export function usageOf(thread: ThreadRecord): ThreadUsage {
  const billableCost = money(thread.billable_message_cost);
  const voiceCost = money(thread.voice_cost);
  return {
    billable_messages: Number(thread.billable_messages),
    billable_message_cost: billableCost,
    voice_minutes: Math.round((Number(thread.voice_seconds) / 60) * 1e6) / 1e6,
    voice_cost: voiceCost,
    total_cost: Math.round((billableCost + voiceCost) * 1e8) / 1e8,
  };
}

function viewOf(thread: ThreadRecord): ThreadView {
  return { id: thread.id, alias: thread.alias, timezone: thread.timezone, usage: usageOf(thread) };
}

export class ThreadService {
  private readonly contextListeners: ((threadId: string) => void)[] = [];

  constructor(
    private readonly store: ThreadsRepository,
    private readonly projects: ProjectService,
    private readonly tokens: ThreadTokens,
  ) {}

  /** Told, after the commit, of each change of a thread's context. */
  onContextChange(listener: (threadId: string) => void): void {
    this.contextListeners.push(listener);
  }

  async create(organizationId: string, input: CreateThreadInput): Promise<{ thread_id: string }> {
    if (!isKnownTimezone(input.timezone)) {
      throw valueError(["body", "timezone"], `unknown timezone '${input.timezone}'`, input.timezone);
    }
    const context = input.json_input === undefined ? {} : parseJsonObject(input.json_input, ["body", "json_input"]);
    let projectId: string | null = null;
    if (input.project_name !== undefined) {
      const project = await this.projects.findByName(organizationId, input.project_name);
      if (!project) throw new NotFoundError("Project not found");
      const { config } = await this.projects.resolve(project);
      if (config.json_input.schema && input.json_input !== undefined) checkAgainst(config.json_input.schema, context, input.json_input);
      projectId = project.id;
    }
    const id = uuidv7();
    const created = await this.store.create({
      id,
      organizationId,
      type: input.type,
      alias: input.alias ?? null,
      timezone: input.timezone,
      projectId,
      context,
    });
    if (!created) throw new ConflictError(`A thread with alias "${input.alias ?? ""}" already exists`);
    return { thread_id: id };
  }

  /** A SIMULATION thread of the project, with the source thread's context and time zone (nothing to validate: both are). */
  async createSimulationThread(source: ThreadRecord, projectId: string): Promise<string> {
    const id = uuidv7();
    const { organization_id: organizationId, timezone, context } = source;
    await this.store.create({ id, organizationId, type: "SIMULATION", alias: null, timezone, projectId, context });
    return id;
  }

  async find(organizationId: string, threadId: string): Promise<ThreadRecord | undefined> {
    return this.store.find(organizationId, threadId);
  }

  async get(organizationId: string, threadId: string): Promise<ThreadRecord> {
    const thread = await this.store.find(organizationId, threadId);
    if (!thread) throw new NotFoundError("Thread not found");
    return thread;
  }

  async view(organizationId: string, threadId: string): Promise<ThreadView> {
    return viewOf(await this.get(organizationId, threadId));
  }

  async viewByAlias(organizationId: string, alias: string): Promise<ThreadView> {
    const thread = await this.store.findByAlias(organizationId, alias);
    if (!thread) throw new NotFoundError("Thread not found");
    return viewOf(thread);
  }

  /**
   * The organization's thread with this alias, or a new thread of the project created with it. Concurrent first
   * calls race on the unique (organization, alias) index: the loser finds the winner's thread.
   */
  async findOrCreateByAlias(organizationId: string, alias: string, projectId: string): Promise<ThreadRecord> {
    // A thread found gone again after losing the race (its alias cleared meanwhile) is looked for once more.
    for (let attempt = 0; attempt < 3; attempt++) {
      const existing = await this.store.findByAlias(organizationId, alias);
      if (existing) return existing;
      const id = uuidv7();
      if (await this.store.create({ id, organizationId, type: "NORMAL", alias, timezone: "UTC", projectId, context: {} })) {
        return this.get(organizationId, id);
      }
    }
    throw new ConflictError(`The thread with alias "${alias}" keeps changing; try again`);
  }

  /** Sets the thread's alias, or clears it with null. */
  async setAlias(organizationId: string, threadId: string, alias: string | null): Promise<ThreadView> {
    const thread = await this.store.setAlias(organizationId, threadId, alias);
    if (thread === "taken") throw new ConflictError(`A thread with alias "${alias ?? ""}" already exists`);
    if (!thread) throw new NotFoundError("Thread not found");
    return viewOf(thread);
  }

  async issueToken(organizationId: string, threadId: string): Promise<{ access_token: string }> {
    await this.get(organizationId, threadId);
    return { access_token: await this.tokens.issue({ threadId, organizationId }) };
  }

  async receiveJsonInput(organizationId: string, threadId: string, projectName: string, jsonInput: string): Promise<{ response: string }> {
    await this.get(organizationId, threadId);
    const project = await this.projects.findByName(organizationId, projectName);
    if (!project) throw new NotFoundError("Project not found");
    const patch = parseJsonObject(jsonInput, ["body", "json_input"]);
    const { config } = await this.projects.resolve(project);
    if (config.json_input.schema) checkAgainst(config.json_input.schema, patch, jsonInput);
    if (!(await this.store.mergeContext(organizationId, threadId, patch))) throw new NotFoundError("Thread not found");
    for (const listener of this.contextListeners) listener(threadId);
    return { response: "JSON input received" };
  }
}

function parseJsonObject(text: string, loc: (string | number)[]): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw valueError(loc, "json_input must be a string holding a JSON object", text);
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw valueError(loc, "json_input must be a string holding a JSON object", text);
  }
  if (nestedDeeperThan(value, maxJsonDepth)) {
    throw valueError(loc, `json_input must not nest objects or arrays more than ${maxJsonDepth} levels deep`, text);
  }
  return value as Record<string, unknown>;
}

function checkAgainst(schema: Record<string, unknown>, value: unknown, raw: string): void {
  const problem = jsonSchemaProblem(schema, value);
  if (problem) throw valueError(["body", "json_input"], `json_input does not match the project's schema: ${problem}`, raw);
}
