-- A chat turn's first statement (store/turns-store.ts `open`, before the model is called). Takes the thread's lease
-- (when p_lease_token is given), finds or opens the conversation, stores the user's message with its message.created
-- event (when p_message_id is given) and returns the conversation's latest messages and the event's seq. Returns no
-- row, having changed nothing, when another live holder has the lease. Sends no NOTIFY: a transaction that notifies
-- holds a database-wide lock until its commit is on disk; the caller announces the event after the commit.
-- It commits durably, as every statement does under the server's synchronous_commit: an asynchronous commit let the
-- events socket deliver an event that a crash could then lose (migrations 004 and 008 had it off; 012 turned it on).
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
