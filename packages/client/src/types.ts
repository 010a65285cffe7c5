import type { paths } from "./openapi.js";

type Method = "get" | "post" | "put" | "patch" | "delete";
type Operation<P extends keyof paths, M extends Method> = NonNullable<paths[P][M]>;
type SuccessOf<R> = R extends { 200: { content: { "application/json": infer T } } }
  ? T
  : R extends { 201: { content: { "application/json": infer T } } }
    ? T
    : never;

/** The JSON body of an operation's success response, as the server's OpenAPI document declares it. */
export type ResponseOf<P extends keyof paths, M extends Method> = Operation<P, M> extends { responses: infer R } ? SuccessOf<R> : never;
/** The JSON request body of an operation. */
export type BodyOf<P extends keyof paths, M extends Method> = Operation<P, M> extends { requestBody: { content: { "application/json": infer B } } } ? B : never;
/** The query parameters of an operation. */
export type QueryOf<P extends keyof paths, M extends Method> = Operation<P, M> extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

/** Makes the named keys optional: the server fills in their defaults. */
export type Defaulted<T, K extends keyof T> = Omit<T, K> & Partial<Pick<T, K>>;

export type Thread = ResponseOf<"/threads/{thread_id}", "get">;
export type ThreadListPage = ResponseOf<"/threads", "get">;
export type ThreadListItem = ThreadListPage["threads"][number];
export type ThreadListQuery = Defaulted<QueryOf<"/threads", "get">, "limit">;
export type CreateThreadInput = Defaulted<BodyOf<"/threads", "post">, "type" | "timezone">;
export type SetAliasInput = BodyOf<"/threads/{thread_id}", "patch">;

type ChatBody = BodyOf<"/chat", "post">;
/** `simulate` on POST /chat (docs/simulation.md), its defaulted fields optional. */
export type SimulateInput = Defaulted<NonNullable<ChatBody["simulate"]>, "initial_messages" | "max_turns" | "create" | "evaluate">;
export type ChatInput = Omit<Defaulted<ChatBody, "streaming" | "start_new_conversation" | "user_type">, "simulate"> & { simulate?: SimulateInput };
export type ChatResponse = ResponseOf<"/chat", "post">;
/** A tool the agent called in a turn (docs/tools.md): in `extras.tool_calls` of the chat response and of the stored reply. */
export type ToolCall = NonNullable<ChatResponse["extras"]["tool_calls"]>[number];
/** One event of a streamed reply: each token as it is generated, then the complete response. */
export type ChatStreamEvent = { type: "token"; token: string; index: number } | { type: "message"; response: ChatResponse };

export type MessagePage = ResponseOf<"/threads/{thread_id}/messages", "get">;
export type Message = MessagePage["messages"][number];
export type MessageQuery = Defaulted<QueryOf<"/threads/{thread_id}/messages", "get">, "limit" | "newer">;
export type SearchPage = ResponseOf<"/threads/{thread_id}/messages/search", "get">;
export type SearchMatch = SearchPage["matches"][number];
export type SearchQuery = Defaulted<QueryOf<"/threads/{thread_id}/messages/search", "get">, "limit" | "context">;

export type SimulationRun = ResponseOf<"/simulations/{simulation_id}", "get">;

export type OrganizationListPage = ResponseOf<"/admin/organizations", "get">;
export type ProjectListPage = ResponseOf<"/admin/organizations/{org_id}/projects", "get">;
export type ApiKeyListPage = ResponseOf<"/admin/organizations/{org_id}/api-keys", "get">;
export type AdminListQuery = Defaulted<QueryOf<"/admin/organizations", "get">, "limit">;
export type RotatedApiKey = ResponseOf<"/admin/api-keys/{key_id}/rotate", "post">;
export type ConfigVersion = ResponseOf<"/admin/projects/{project_id}/versions/{version_id}/config", "get">;

export type CallListPage = ResponseOf<"/calls", "get">;
export type CallSummary = CallListPage["calls"][number];
export type CallListQuery = Defaulted<QueryOf<"/calls", "get">, "limit">;
export type CallDetail = ResponseOf<"/calls/{call_id}", "get">;
export type PhoneCallInput = BodyOf<"/voice/{thread_id}/phone-call", "post">;
export type PhoneCall = ResponseOf<"/voice/{thread_id}/phone-call", "post">;
export type WebCallInput = BodyOf<"/voice/{thread_id}/web-call", "post">;
export type SimulatedInboundInput = BodyOf<"/voice/simulated/inbound", "post">;
export type InboundCall = ResponseOf<"/voice/simulated/inbound", "post">;

export type Organization = ResponseOf<"/admin/organizations", "post">;
export type CreatedApiKey = ResponseOf<"/admin/organizations/{org_id}/api-keys", "post">;
export type ProjectConfig = BodyOf<"/admin/projects/{project_id}/config", "put">["config"];
export type CreatedProject = ResponseOf<"/admin/organizations/{org_id}/projects", "post">;

export type LegacyChatInput = Defaulted<BodyOf<"/legacy/chat", "post">, "streaming" | "start_new_conversation">;
export type LegacyFollowupInput = Defaulted<BodyOf<"/legacy/get_followup", "post">, "streaming" | "start_new_conversation">;
export type LegacyConversations = ResponseOf<"/legacy/retrieve_conversations", "post">;
export type LegacyConversationsQuery = Defaulted<QueryOf<"/legacy/retrieve_conversations", "post">, "page" | "limit">;

/** Events of a thread's events WebSocket; each has a per-thread increasing `seq`. */
export interface MessageCreatedEvent {
  type: "message.created";
  seq: number;
  message: { message_id: string; role: string; message: string; conversation_id: number; call_id?: string };
}
export interface CallUpdatedEvent {
  type: "call.updated";
  seq: number;
  call: CallSummary;
}
export interface WebCallReadyEvent {
  type: "web_call.ready";
  seq: number;
  call_id: string;
  access_token: string;
}
export interface ToolCalledEvent {
  type: "tool.called";
  seq: number;
  conversation_id: number;
  /** The user's message the turn answers; null for a proactive turn. */
  message_id: string | null;
  reply_message_id: string;
  tool_call: ToolCall;
}
export type KnownThreadEvent = MessageCreatedEvent | CallUpdatedEvent | WebCallReadyEvent | ToolCalledEvent;
/** A known event, or one of a type this client does not know yet (the server may add types). */
export type ThreadEvent = KnownThreadEvent | { type: string; seq: number; [key: string]: unknown };

/** Narrows an event to a known type. */
export function isEvent<T extends KnownThreadEvent["type"]>(event: ThreadEvent, type: T): event is Extract<KnownThreadEvent, { type: T }> {
  return event.type === type;
}
