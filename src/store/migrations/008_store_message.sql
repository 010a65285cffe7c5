-- One definition of how a message is stored with its message.created event, used by a chat turn's two statements
-- and by a call's utterances (three copies of the same two inserts before). The callers number both (the thread
-- row's counters) and announce the event after their commit.
CREATE FUNCTION parley_store_message(
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
LANGUAGE sql AS $$
  INSERT INTO messages (id, thread_id, seq, conversation_id, role, content, extras)
  VALUES (p_message_id, p_thread_id, p_seq, p_conversation_id, p_role, p_content, p_extras);
  INSERT INTO thread_events (thread_id, seq, type, payload)
  VALUES (p_thread_id, p_event_seq, 'message.created', jsonb_build_object('message', jsonb_build_object(
    'message_id', p_message_id, 'role', p_role, 'message', p_content, 'conversation_id', p_conversation_id) || p_event_extra));
$$;

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
  -- No disk flush for this commit: the reply's durable commit flushes the user's message with it, and a database
  -- crash before that fails the turn, whose client is then told so.
  PERFORM set_config('synchronous_commit', 'off', true);
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

CREATE OR REPLACE FUNCTION parley_close_turn(
  p_thread_id text,
  p_conversation_id integer,
  p_message_id text,
  p_content text,
  p_extras jsonb,
  p_price_usd numeric,
  p_lease_token text
) RETURNS TABLE (event_seq bigint, released boolean)
LANGUAGE plpgsql AS $$
DECLARE
  v_seq bigint;
  v_event bigint;
  v_released boolean;
BEGIN
  PERFORM set_config('parley.announced_after_commit', 'on', true);
  UPDATE threads t
     SET last_message_seq = t.last_message_seq + 1,
         last_event_seq = t.last_event_seq + 1,
         billable_messages = t.billable_messages + 1,
         billable_message_cost = t.billable_message_cost + p_price_usd,
         lock_token = CASE WHEN t.lock_token = p_lease_token THEN NULL ELSE t.lock_token END,
         lock_pid = CASE WHEN t.lock_token = p_lease_token THEN NULL ELSE t.lock_pid END,
         lock_until = CASE WHEN t.lock_token = p_lease_token THEN NULL ELSE t.lock_until END
   WHERE t.id = p_thread_id
  RETURNING t.last_message_seq, t.last_event_seq, p_lease_token IS NOT NULL AND t.lock_token IS NULL INTO v_seq, v_event, v_released;
  IF NOT FOUND THEN
    RAISE EXCEPTION 'thread % vanished', p_thread_id;
  END IF;
  PERFORM parley_store_message(p_thread_id, v_seq, v_event, p_message_id, p_conversation_id, 'assistant', p_content, p_extras, '{}');
  RETURN QUERY SELECT v_event, v_released;
END
$$;
