-- The trigram index is on `messages` again, and what migration 010 moved off the chat turn's write path is left to
-- the index's own queue: GIN's pending list. An insert appends the message's trigrams to the pending list (a
-- sequential append, no search of the index's tree); every instance merges the list into the tree every
-- SEARCH_INDEX_INTERVAL_MS (store/search-index-merger.ts, `gin_clean_pending_list`). The list's limit, past which the
-- inserting statement would merge it itself, is 64 MB instead of 4 MB, so that a turn never does the merge while the
-- mergers run; it remains the bound should they all stop.
-- Migration 010's queue and copy cost more than they saved: each message was written three more times (a queued row,
-- its delete, a row of `message_search`) besides the index, and the store benchmark measured Parley's turn with its
-- indexer running below the schema before 010, which maintained the index on every insert (729 against 914 turns/s).
-- A message is also in the index from its commit, as before 010: search reads one table, the pending list included.
-- Building the index reads every message once; on a large database this migration takes that long, and holds writes
-- to `messages` meanwhile.
CREATE INDEX messages_content_trgm ON messages USING gin (content gin_trgm_ops) WITH (gin_pending_list_limit = 65536);

DROP TRIGGER messages_search_updated ON messages;
DROP FUNCTION parley_enqueue_search_of_row();
DROP FUNCTION parley_index_queued_messages(integer);
DROP TABLE message_search_queue;
DROP TABLE message_search;

-- Parley's own writer of messages, `parley_store_message` (chat turns and calls), announces the thread's change itself,
-- and the insert trigger no longer fires for its inserts: the trigger collected a transition table and ran a PL/pgSQL
-- function for every stored message, about a tenth of a chat turn's database time (measured with the search queue of
-- migration 010 still in place). The trigger stays for every other insert (by hand, or a tool's), which is announced
-- as before. `parley.message_writer` is on only for the duration of the writer's own insert, so that another insert
-- later in the same transaction still fires the trigger.
DROP TRIGGER messages_inserted ON messages;
CREATE TRIGGER messages_inserted AFTER INSERT ON messages REFERENCING NEW TABLE AS changed
  FOR EACH STATEMENT WHEN (current_setting('parley.message_writer', true) IS DISTINCT FROM 'on')
  EXECUTE FUNCTION parley_messages_inserted();

-- Inserts by others than Parley's writer (by hand, a tool's) are announced to the instances' caches.
CREATE OR REPLACE FUNCTION parley_messages_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('parley.announced_after_commit', true) IS DISTINCT FROM 'on' THEN
    PERFORM pg_notify('parley_cache', 'thread:' || thread_id) FROM (SELECT DISTINCT thread_id FROM changed) AS threads;
  END IF;
  RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION parley_store_message(
  p_thread_id text,
  p_seq bigint,
  p_event_seq bigint,
  p_message_id text,
  p_conversation_id integer,
  p_role text,
  p_content text,
  p_extras jsonb,
  p_event_extra jsonb
) RETURNS void
LANGUAGE plpgsql AS $$
BEGIN
  PERFORM set_config('parley.message_writer', 'on', true);
  INSERT INTO messages (id, thread_id, seq, conversation_id, role, content, extras)
  VALUES (p_message_id, p_thread_id, p_seq, p_conversation_id, p_role, p_content, p_extras);
  PERFORM set_config('parley.message_writer', 'off', true);
  INSERT INTO thread_events (thread_id, seq, type, message_seq, payload)
  VALUES (p_thread_id, p_event_seq, 'message.created', p_seq, nullif(p_event_extra, '{}'::jsonb));
  -- The chat turn's caller announces the change after its commit (migration 012); a call's messages are announced here.
  IF current_setting('parley.announced_after_commit', true) IS DISTINCT FROM 'on' THEN
    PERFORM pg_notify('parley_cache', 'thread:' || p_thread_id);
  END IF;
END
$$;
