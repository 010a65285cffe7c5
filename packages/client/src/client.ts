import { errorOf, ParleyError, StreamError } from "./errors.js";
import { ThreadEventStream, type EventStreamOptions, type WebSocketConstructor } from "./events.js";
import { ndjsonLines } from "./ndjson.js";
import type { paths } from "./openapi.js";
import type {
  AdminListQuery, ApiKeyListPage, ConfigVersion, OrganizationListPage, ProjectListPage, RotatedApiKey, SimulationRun,
  CallDetail, CallListPage, CallListQuery, ChatInput, ChatResponse, ChatStreamEvent, CreatedApiKey, CreatedProject,
  CreateThreadInput, LegacyChatInput, LegacyConversations, LegacyConversationsQuery, LegacyFollowupInput, MessagePage,
  MessageQuery, Organization, PhoneCall, PhoneCallInput, ProjectConfig, SearchPage, SearchQuery, SetAliasInput, SimulatedInboundInput, InboundCall, Thread, ThreadListPage,
  ThreadListQuery, WebCallInput,
} from "./types.js";

export interface ParleyOptions {
  /** The server's address, e.g. `http://localhost:8000`. */
  baseUrl: string;
  /** An organization's API key, or a thread token (then only that thread's endpoints answer). */
  credential?: string;
  /** The operator's `ADMIN_API_KEY`, for `admin`. */
  adminKey?: string;
  /** Where the earlier-generation interface lives (`LEGACY_BASE_PATH`); `/legacy` by default. */
  legacyBasePath?: string;
  /** Defaults to the global `fetch`. */
  fetch?: typeof fetch;
  /** For `events()`: defaults to the global `WebSocket` (browsers, Node 22); on Node 20 pass the `ws` package's. */
  WebSocket?: WebSocketConstructor;
}

type QueryValue = string | number | boolean | string[] | undefined;
type Query = Record<string, QueryValue>;
type Path = keyof paths;

interface RequestSpec {
  method: "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
  /** A path template of the OpenAPI document, so that the compiler refuses a path the server does not have. */
  path: Path;
  params?: Record<string, string>;
  query?: Query;
  body?: unknown;
  admin?: boolean;
  accept?: string;
  signal?: AbortSignal;
}

/** Walks cursor pages: `fetchPage(cursor)` until a page's cursor is null. */
async function* cursorPages<P extends { pagination: { cursor: string | null } }>(first: string | undefined, fetchPage: (cursor: string | undefined) => Promise<P>): AsyncGenerator<P> {
  let cursor = first;
  for (;;) {
    const page = await fetchPage(cursor);
    yield page;
    if (page.pagination.cursor === null) return;
    cursor = page.pagination.cursor;
  }
}

/** The typed client of Parley's whole HTTP interface. */
export class Parley {
  private readonly baseUrl: string;
  private readonly fetchImpl: typeof fetch;
  private readonly legacyBasePath: string;

  constructor(private readonly options: ParleyOptions) {
    this.baseUrl = options.baseUrl.replace(/\/+$/, "");
    this.fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.legacyBasePath = (options.legacyBasePath ?? "/legacy").replace(/\/+$/, "");
  }

  private url(spec: Pick<RequestSpec, "path" | "params" | "query">): string {
    let path: string = spec.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(spec.params?.[name] ?? ""));
    if (path.startsWith("/legacy/")) path = this.legacyBasePath + path.slice("/legacy".length);
    const search = new URLSearchParams();
    for (const [key, value] of Object.entries(spec.query ?? {})) {
      if (value === undefined) continue;
      for (const item of Array.isArray(value) ? value : [value]) search.append(key, String(item));
    }
    const text = search.toString();
    return `${this.baseUrl}${path}${text ? `?${text}` : ""}`;
  }

  private async send(spec: RequestSpec): Promise<Response> {
    const credential = spec.admin ? this.options.adminKey : this.options.credential;
    const headers: Record<string, string> = {};
    if (credential !== undefined) headers["authorization"] = `Bearer ${credential}`;
    if (spec.body !== undefined) headers["content-type"] = "application/json";
    if (spec.accept) headers["accept"] = spec.accept;
    const response = await this.fetchImpl(this.url(spec), {
      method: spec.method,
      headers,
      ...(spec.body !== undefined ? { body: JSON.stringify(spec.body) } : {}),
      ...(spec.signal ? { signal: spec.signal } : {}),
    });
    if (!response.ok) throw await errorOf(response);
    return response;
  }

  private async json<T>(spec: RequestSpec): Promise<T> {
    const response = await this.send(spec);
    return response.status === 204 ? (undefined as T) : ((await response.json()) as T);
  }

  /** The lines of a streamed reply, with the mid-stream error line turned into a `StreamError`. */
  private async *stream(spec: RequestSpec): AsyncGenerator<ChatStreamEvent> {
    const response = await this.send({ ...spec, accept: "application/x-ndjson" });
    if (!response.body) throw new ParleyError(response.status, "the response has no body", response.headers.get("x-request-id"));
    for await (const line of ndjsonLines(response.body)) {
      const item = line as { token?: string; index?: number; error?: string; status_code?: number; message?: string };
      if (typeof item.token === "string") yield { type: "token", token: item.token, index: item.index ?? 0 };
      else if (item.error !== undefined) throw new StreamError(item.status_code ?? 502, item.error, response.headers.get("x-request-id"));
      else yield { type: "message", response: line as ChatResponse };
    }
  }

  readonly system = {
    health: () => this.json<{ status: string }>({ method: "GET", path: "/healthz" }),
    ready: () => this.json<{ status: string }>({ method: "GET", path: "/readyz" }),
    /** Prometheus text. */
    metrics: async () => (await this.send({ method: "GET", path: "/metrics" })).text(),
  };

  readonly threads = {
    create: (input: CreateThreadInput = {}) => this.json<{ thread_id: string }>({ method: "POST", path: "/threads", body: input }),
    get: (threadId: string) => this.json<Thread>({ method: "GET", path: "/threads/{thread_id}", params: { thread_id: threadId } }),
    /** The organization's thread with this alias (a caller's E.164 number for inbound calls); NotFound when none. */
    byAlias: (alias: string) => this.json<Thread>({ method: "GET", path: "/threads/by-alias/{alias}", params: { alias } }),
    /** Sets the thread's alias, or clears it with null; Conflict when another thread of the organization has it. */
    setAlias: (threadId: string, alias: string | null) =>
      this.json<Thread>({ method: "PATCH", path: "/threads/{thread_id}", params: { thread_id: threadId }, body: { alias } satisfies SetAliasInput }),
    /** One page of the organization's threads, newest first. */
    list: (query: ThreadListQuery = {}) => this.json<ThreadListPage>({ method: "GET", path: "/threads", query }),
    /** Every page from `query.cursor` (or the newest) on, as an async iterator. */
    pages: (query: ThreadListQuery = {}) => cursorPages(query.cursor, (cursor) => this.threads.list({ ...query, cursor })),
    token: (threadId: string) => this.json<{ access_token: string }>({ method: "POST", path: "/threads/{thread_id}/token", params: { thread_id: threadId } }),
    jsonInput: (threadId: string, input: { project_name: string; json_input: string }) =>
      this.json<{ response: string }>({ method: "POST", path: "/threads/{thread_id}/json-input", params: { thread_id: threadId }, body: input }),
  };

  readonly messages = {
    /** One page, chronological; without a cursor the latest messages. */
    list: (threadId: string, query: MessageQuery = {}) =>
      this.json<MessagePage>({ method: "GET", path: "/threads/{thread_id}/messages", params: { thread_id: threadId }, query }),
    /** Pages walked from `query.cursor` (or the latest) towards older messages, or newer ones with `newer: true`. */
    pages: (threadId: string, query: MessageQuery = {}) => cursorPages(query.cursor, (cursor) => this.messages.list(threadId, { ...query, cursor })),
    search: (threadId: string, query: SearchQuery) =>
      this.json<SearchPage>({ method: "GET", path: "/threads/{thread_id}/messages/search", params: { thread_id: threadId }, query }),
    /** Pages of matches, newest first. */
    searchPages: (threadId: string, query: SearchQuery) => cursorPages(query.cursor, (cursor) => this.messages.search(threadId, { ...query, cursor })),
  };

  readonly chat = {
    send: (input: ChatInput) => this.json<ChatResponse>({ method: "POST", path: "/chat", body: { ...input, streaming: false } }),
    /** The reply token by token, then `{type: "message"}` with the complete response. Breaking out early leaves the reply to complete and be stored. */
    stream: (input: ChatInput, options: { signal?: AbortSignal } = {}) =>
      this.stream({ method: "POST", path: "/chat", body: { ...input, streaming: true }, ...(options.signal ? { signal: options.signal } : {}) }),
  };

  readonly simulations = {
    /** A stored simulation run (`simulate` with `create: true`), as the chat response's `extras.simulation` gave it. */
    get: (simulationId: string) => this.json<SimulationRun>({ method: "GET", path: "/simulations/{simulation_id}", params: { simulation_id: simulationId } }),
  };

  readonly calls = {
    list: (query: CallListQuery = {}) => this.json<CallListPage>({ method: "GET", path: "/calls", query }),
    pages: (query: CallListQuery = {}) => cursorPages(query.cursor, (cursor) => this.calls.list({ ...query, cursor })),
    get: (callId: string) => this.json<CallDetail>({ method: "GET", path: "/calls/{call_id}", params: { call_id: callId } }),
    /** The WAV bytes at a call's signed `recording_url`. */
    recording: async (recordingUrl: string) => {
      const url = new URL(recordingUrl, this.baseUrl);
      const file = url.pathname.split("/").pop() ?? "";
      const query = Object.fromEntries(url.searchParams);
      const response = await this.send({ method: "GET", path: "/recordings/{file}", params: { file }, query });
      return new Uint8Array(await response.arrayBuffer());
    },
  };

  readonly voice = {
    phoneCall: (threadId: string, input: PhoneCallInput) =>
      this.json<PhoneCall>({ method: "POST", path: "/voice/{thread_id}/phone-call", params: { thread_id: threadId }, body: input }),
    endPhoneCall: (threadId: string) => this.json<{ response: string }>({ method: "DELETE", path: "/voice/{thread_id}/phone-call", params: { thread_id: threadId } }),
    webCall: (threadId: string, input: WebCallInput) =>
      this.json<{ status: string; message: string }>({ method: "POST", path: "/voice/{thread_id}/web-call", params: { thread_id: threadId }, body: input }),
    /** A simulated caller rings the project's first number (the project needs `voice.inbound`); the call is answered at once. */
    simulatedInbound: (input: SimulatedInboundInput) => this.json<InboundCall>({ method: "POST", path: "/voice/simulated/inbound", body: input }),
  };

  readonly admin = {
    createOrganization: (name: string) => this.json<Organization>({ method: "POST", path: "/admin/organizations", body: { name }, admin: true }),
    createApiKey: (organizationId: string) =>
      this.json<CreatedApiKey>({ method: "POST", path: "/admin/organizations/{org_id}/api-keys", params: { org_id: organizationId }, admin: true }),
    revokeApiKey: (keyId: string) => this.json<void>({ method: "DELETE", path: "/admin/api-keys/{key_id}", params: { key_id: keyId }, admin: true }),
    createProject: (organizationId: string, name: string, config: ProjectConfig) =>
      this.json<CreatedProject>({ method: "POST", path: "/admin/organizations/{org_id}/projects", params: { org_id: organizationId }, body: { name, config }, admin: true }),
    publishConfig: (projectId: string, config: ProjectConfig) =>
      this.json<{ config_version_id: string }>({ method: "PUT", path: "/admin/projects/{project_id}/config", params: { project_id: projectId }, body: { config }, admin: true }),
    listOrganizations: (query: AdminListQuery = {}) => this.json<OrganizationListPage>({ method: "GET", path: "/admin/organizations", query, admin: true }),
    organizationPages: (query: AdminListQuery = {}) => cursorPages(query.cursor, (cursor) => this.admin.listOrganizations({ ...query, cursor })),
    listProjects: (organizationId: string, query: AdminListQuery = {}) =>
      this.json<ProjectListPage>({ method: "GET", path: "/admin/organizations/{org_id}/projects", params: { org_id: organizationId }, query, admin: true }),
    listApiKeys: (organizationId: string, query: AdminListQuery = {}) =>
      this.json<ApiKeyListPage>({ method: "GET", path: "/admin/organizations/{org_id}/api-keys", params: { org_id: organizationId }, query, admin: true }),
    /** A new key of the key's organization, shown once; the old key is revoked. */
    rotateApiKey: (keyId: string) => this.json<RotatedApiKey>({ method: "POST", path: "/admin/api-keys/{key_id}/rotate", params: { key_id: keyId }, admin: true }),
    /** The project with its current configuration (secrets never returned) and version ids. */
    getProject: (projectId: string) => this.json<unknown>({ method: "GET", path: "/admin/projects/{project_id}", params: { project_id: projectId }, admin: true }),
    /** One configuration version as published (secrets never returned), to compare versions or publish one again. */
    getConfigVersion: (projectId: string, versionId: string) =>
      this.json<ConfigVersion>({ method: "GET", path: "/admin/projects/{project_id}/versions/{version_id}/config", params: { project_id: projectId, version_id: versionId }, admin: true }),
  };

  readonly legacy = {
    createThread: () => this.json<{ thread_id: string }>({ method: "POST", path: "/legacy/create_thread" }),
    chat: (input: LegacyChatInput) => this.json<{ message: string }>({ method: "POST", path: "/legacy/chat", body: { ...input, streaming: false } }),
    chatStream: (input: LegacyChatInput) => this.stream({ method: "POST", path: "/legacy/chat", body: { ...input, streaming: true } }),
    getFollowup: (input: LegacyFollowupInput) => this.json<{ message: string }>({ method: "POST", path: "/legacy/get_followup", body: { ...input, streaming: false } }),
    getFollowupStream: (input: LegacyFollowupInput) => this.stream({ method: "POST", path: "/legacy/get_followup", body: { ...input, streaming: true } }),
    retrieveConversations: (query: LegacyConversationsQuery) => this.json<LegacyConversations>({ method: "POST", path: "/legacy/retrieve_conversations", query }),
    endConversation: (threadId: string) => this.json<{ message: string }>({ method: "POST", path: "/legacy/end_conversation", body: { thread_id: threadId } }),
    retrieveConversationSummary: (threadId: string) =>
      this.json<{ conversation_summary: string }>({ method: "POST", path: "/legacy/retrieve_conversation_summary", body: { thread_id: threadId } }),
    generateToken: (threadId: string) => this.json<{ access_token: string }>({ method: "POST", path: "/legacy/generate-token/{thread_id}", params: { thread_id: threadId } }),
  };

  /**
   * The thread's events WebSocket as an async iterator (`message.created`, `call.updated`, `web_call.ready`, …).
   * With an API key the client first asks for a thread token, so that the key never appears in a URL.
   */
  events(threadId: string, options: EventStreamOptions = {}): ThreadEventStream {
    const WebSocketImpl = this.options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
    if (!WebSocketImpl) throw new Error("No WebSocket implementation: pass the `ws` package's WebSocket as options.WebSocket");
    const socketBase = this.baseUrl.replace(/^http/, "ws");
    const url = async (after: number | undefined) => {
      const credential = this.options.credential ?? "";
      const token = credential.startsWith("sk_") ? (await this.threads.token(threadId)).access_token : credential;
      const query = new URLSearchParams({ token });
      if (after !== undefined) query.set("after", String(after));
      return `${socketBase}/threads/${encodeURIComponent(threadId)}/events?${query}`;
    };
    return new ThreadEventStream(url, WebSocketImpl, options);
  }
}
