import type { ThreadRecord } from "./threads-repository.js";

export interface ThreadListFilters {
  type?: string;
  /** Threads whose default project has this name, or that have a conversation in it. */
  projectName?: string;
  /** Keyset position: only threads strictly older than this (created_at, id). */
  before?: { createdKey: string; id: string };
}

export interface ListedThread extends ThreadRecord {
  /** created_at at microsecond precision, as text, so that a cursor keeps it exactly. */
  created_key: string;
  project_name: string | null;
  /** The start of the thread's first user message (200 characters at most). */
  first_user_message: string | null;
  call_count: number;
  /** The newest of: the thread's creation, its newest message, its newest call's end (or start). */
  last_activity_at: Date;
}

/** An organization's threads, newest first, a keyset page at a time. */
export interface ThreadListingRepository {
  list(organizationId: string, filters: ThreadListFilters, limit: number): Promise<ListedThread[]>;
}
