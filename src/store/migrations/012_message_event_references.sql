-- A message's `message.created` event refers to the message instead of copying it. The event row carries the message's
-- seq in `message_seq` and, in `payload`, only the fields the event adds to the message (a call's `call_id`), or NULL;
-- store/events-store.ts builds the payload clients receive from the message row when the event is read, the same
-- jsonb as the copy was (jsonb orders an object's keys itself, so the text is byte for byte the same). Messages are
-- never edited or deleted by Parley; the payload of an event whose message was deleted by hand is `{"message": null}`.
-- Rows written before this migration keep their copied payload and `message_seq` NULL: both shapes are read.
ALTER TABLE thread_events ADD COLUMN message_seq bigint;
ALTER TABLE thread_events ALTER COLUMN payload DROP NOT NULL;
ALTER TABLE thread_events ADD CONSTRAINT thread_events_payload_or_message CHECK (payload IS NOT NULL OR message_seq IS NOT NULL);

-- PL/pgSQL rather than SQL: a SQL function called from PL/pgSQL was parsed and planned again at every call (its two
-- inserts were a tenth of a turn's database time); PL/pgSQL keeps the plans for the session.
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
  INSERT INTO messages (id, thread_id, seq, conversation_id, role, content, extras)
  VALUES (p_message_id, p_thread_id, p_seq, p_conversation_id, p_role, p_content, p_extras);
  INSERT INTO thread_events (thread_id, seq, type, message_seq, payload)
  VALUES (p_thread_id, p_event_seq, 'message.created', p_seq, nullif(p_event_extra, '{}'::jsonb));
END
$$;

-- The two statement triggers of an insert into `messages` (the cache invalidation of migration 005 and the search
-- queue of migration 010) as one: one transition table and one function call per statement instead of two.
CREATE FUNCTION parley_messages_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO message_search_queue (thread_id, seq) SELECT thread_id, seq FROM changed;
  IF current_setting('parley.announced_after_commit', true) IS DISTINCT FROM 'on' THEN
    PERFORM pg_notify('parley_cache', 'thread:' || thread_id) FROM (SELECT DISTINCT thread_id FROM changed) AS threads;
  END IF;
  RETURN NULL;
END
$$;

DROP TRIGGER messages_inserted ON messages;
DROP TRIGGER messages_search_inserted ON messages;
CREATE TRIGGER messages_inserted AFTER INSERT ON messages REFERENCING NEW TABLE AS changed
  FOR EACH STATEMENT EXECUTE FUNCTION parley_messages_inserted();
DROP FUNCTION parley_enqueue_search();
