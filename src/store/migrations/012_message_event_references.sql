-- A message's `message.created` event refers to the message instead of copying it. The event row carries the message's
-- seq in `message_seq` and, in `payload`, only the fields the event adds to the message (a call's `call_id`), or NULL;
-- store/events-store.ts builds the payload clients receive from the message row when the event is read, the same
-- jsonb as the copy was (jsonb orders an object's keys itself, so the text is byte for byte the same). Messages are
-- never edited or deleted by Parley; the payload of an event whose message was deleted by hand is `{"message": null}`.
-- Rows written before this migration keep their copied payload and `message_seq` NULL: both shapes are read.
ALTER TABLE thread_events ADD COLUMN message_seq bigint;
ALTER TABLE thread_events ALTER COLUMN payload DROP NOT NULL;
-- Every existing row has a payload (the column was NOT NULL): NOT VALID spares a scan of the table under its lock.
ALTER TABLE thread_events ADD CONSTRAINT thread_events_payload_or_message CHECK (payload IS NOT NULL OR message_seq IS NOT NULL) NOT VALID;

-- PL/pgSQL rather than SQL: a SQL function called from PL/pgSQL was parsed and planned again at every call (twice
-- per turn); PL/pgSQL keeps the plans of its statements for the session.
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

-- The turn's first statement commits durably again, as every statement does under the server's synchronous_commit
-- (migrations 004 and 008 turned it off for this transaction). Its commit made the user's message and its event
-- visible before they were on disk: the events socket delivered an event that a database crash could then lose, and
-- the next event of the thread took its seq again, which a client that had seen it skips when it resumes with
-- `?after=SEQ`; a failed turn answered 502 with its user's message not yet on disk. Under load the flushes of
-- concurrent turns are one (group commit): the store benchmark measured no difference beyond its noise.
CREATE OR REPLACE FUNCTION parley_open_turn(
  p_thread_id text,
  p_project_id uuid,
  p_start_new boolean,
  p_message_id text,
  p_content text,
  p_extras jsonb,
  p_history_limit integer,
  p_lease_token text,
  p_lease_pid integer,
  p_lease_seconds integer
) RETURNS TABLE (conversation_id integer, history jsonb, event_seq bigint)
LANGUAGE plpgsql AS $$
DECLARE
  v_active integer;
  v_last integer;
  v_conversation integer;
  v_seq bigint;
  v_event bigint;
  v_step integer := CASE WHEN p_message_id IS NULL THEN 0 ELSE 1 END;
BEGIN
  PERFORM set_config('parley.announced_after_commit', 'on', true);
  -- One update of the thread row takes the lease and numbers the user's message and its event.
  IF p_lease_token IS NULL THEN
    UPDATE threads t SET last_message_seq = t.last_message_seq + v_step, last_event_seq = t.last_event_seq + v_step
     WHERE t.id = p_thread_id
    RETURNING t.active_conversation_id, t.last_conversation_id, t.last_message_seq, t.last_event_seq INTO v_active, v_last, v_seq, v_event;
  ELSE
    UPDATE threads t SET lock_token = p_lease_token, lock_pid = p_lease_pid, lock_until = now() + make_interval(secs => p_lease_seconds),
                         last_message_seq = t.last_message_seq + v_step, last_event_seq = t.last_event_seq + v_step
     WHERE t.id = p_thread_id AND (t.lock_token IS NULL OR t.lock_until < now())
    RETURNING t.active_conversation_id, t.last_conversation_id, t.last_message_seq, t.last_event_seq INTO v_active, v_last, v_seq, v_event;
    IF NOT FOUND THEN
      -- Only a held lease pays for the liveness check: a holder whose backend is gone (its instance died) loses it.
      UPDATE threads t SET lock_token = p_lease_token, lock_pid = p_lease_pid, lock_until = now() + make_interval(secs => p_lease_seconds),
                           last_message_seq = t.last_message_seq + v_step, last_event_seq = t.last_event_seq + v_step
       WHERE t.id = p_thread_id AND (t.lock_pid IS NULL OR NOT EXISTS (SELECT 1 FROM pg_stat_get_activity(t.lock_pid)))
      RETURNING t.active_conversation_id, t.last_conversation_id, t.last_message_seq, t.last_event_seq INTO v_active, v_last, v_seq, v_event;
      IF NOT FOUND THEN
        IF NOT EXISTS (SELECT 1 FROM threads t WHERE t.id = p_thread_id) THEN
          RAISE EXCEPTION 'thread % vanished', p_thread_id;
        END IF;
        RETURN;
      END IF;
    END IF;
  END IF;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'thread % vanished', p_thread_id;
  END IF;

  IF v_active IS NOT NULL AND NOT p_start_new THEN
    v_conversation := v_active;
  ELSE
    IF v_active IS NOT NULL THEN
      UPDATE conversations c SET ended_at = clock_timestamp() WHERE c.thread_id = p_thread_id AND c.conversation_id = v_active;
    END IF;
    v_conversation := v_last + 1;
    INSERT INTO conversations (thread_id, conversation_id, project_id) VALUES (p_thread_id, v_conversation, p_project_id);
    UPDATE threads t SET active_conversation_id = v_conversation, last_conversation_id = v_conversation WHERE t.id = p_thread_id;
  END IF;

  IF p_message_id IS NULL THEN
    v_event := NULL;
  ELSE
    PERFORM parley_store_message(p_thread_id, v_seq, v_event, p_message_id, v_conversation, 'user', p_content, p_extras, '{}');
  END IF;

  RETURN QUERY
    SELECT v_conversation, coalesce(jsonb_agg(jsonb_build_object('role', latest.role, 'content', latest.content) ORDER BY latest.seq), '[]'::jsonb), v_event
      FROM (SELECT m.seq, m.role, m.content FROM messages m
             WHERE m.thread_id = p_thread_id AND m.conversation_id = v_conversation
             ORDER BY m.seq DESC LIMIT p_history_limit) latest;
END
$$;
