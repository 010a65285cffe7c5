import type { ListedThread, ThreadListFilters, ThreadListingRepository } from "./thread-listing-repository.js";
import { cursorObject, invalidCursor } from "../shared/cursors.js";
import { usageOf, type ThreadUsage } from "./thread-service.js";

export interface ThreadListQuery {
  type?: string;
  projectName?: string;
  cursor?: string;
  limit: number;
}

export interface ThreadListItem {
  id: string;
  alias: string | null;
  timezone: string;
  type: string;
  project_name: string | null;
  created_at: string;
  usage: ThreadUsage;
  first_user_message: string | null;
  last_activity_at: string;
  message_count: number;
  call_count: number;
}

export interface ThreadListPage {
  threads: ThreadListItem[];
  pagination: { cursor: string | null };
}

/** The cursor body: `k` marks a thread-list cursor, `c` and `i` the (created_at, id) of the page's last thread. */
interface ThreadListCursor {
  k: "t";
  c: string;
  i: string;
}

function encodeThreadListCursor(thread: ListedThread): string {
  const body: ThreadListCursor = { k: "t", c: thread.created_key, i: thread.id };
  return Buffer.from(JSON.stringify(body)).toString("base64url");
}

function decodeThreadListCursor(cursor: string): { createdKey: string; id: string } {
  const { k, c, i } = cursorObject(cursor) as Partial<ThreadListCursor>;
  if (k !== "t" || typeof c !== "string" || !isMicrosecondInstant(c)) throw invalidCursor(cursor);
  if (typeof i !== "string" || i.length === 0 || i.length > 200 || i.includes("\u0000")) throw invalidCursor(cursor);
  return { createdKey: c, id: i };
}

/** A real UTC instant in the key's format: PostgreSQL answers month 13 or February 30 with an error, not an empty page. */
function isMicrosecondInstant(key: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/.test(key)) return false;
  const millis = `${key.slice(0, 23)}Z`;
  const date = new Date(millis);
  return !Number.isNaN(date.getTime()) && date.getUTCFullYear() >= 1 && date.toISOString() === millis;
}

function listItem(thread: ListedThread): ThreadListItem {
  return {
    id: thread.id,
    alias: thread.alias,
    timezone: thread.timezone,
    type: thread.type,
    project_name: thread.project_name,
    created_at: new Date(thread.created_at).toISOString(),
    usage: usageOf(thread),
    first_user_message: thread.first_user_message,
    last_activity_at: new Date(thread.last_activity_at).toISOString(),
    // Messages are numbered 1, 2, … in each thread, in the transaction that stores them: the last number is the count.
    message_count: Number(thread.last_message_seq),
    call_count: thread.call_count,
  };
}

/** The organization's threads, newest first, one keyset page at a time (the console's thread list). */
export class ThreadListing {
  constructor(private readonly store: ThreadListingRepository) {}

  async list(organizationId: string, query: ThreadListQuery): Promise<ThreadListPage> {
    const filters: ThreadListFilters = {
      ...(query.type !== undefined ? { type: query.type } : {}),
      ...(query.projectName !== undefined ? { projectName: query.projectName } : {}),
      ...(query.cursor !== undefined ? { before: decodeThreadListCursor(query.cursor) } : {}),
    };
    const rows = await this.store.list(organizationId, filters, query.limit + 1);
    const page = rows.slice(0, query.limit);
    const last = page.at(-1);
    return { threads: page.map(listItem), pagination: { cursor: rows.length > query.limit && last ? encodeThreadListCursor(last) : null } };
  }
}
