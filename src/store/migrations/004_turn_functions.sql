-- A chat turn is two statements, one before the model is called and one after (see store/turns-store.ts): each
-- statement is its own transaction and one round trip, where the same work as separate statements took two
-- transactions, a lease of its own and ten round trips. Neither sends a NOTIFY: a transaction that notifies holds
-- a database-wide lock until its commit is on disk, which serialized every turn behind one disk flush at a time
-- (a third of the throughput). The caller announces the new events once the statement has returned.

-- A turn's prompt is the latest messages of its conversation: an index that hands them over newest first, whatever
-- the thread's size (through (thread_id, seq) the planner could filter the whole thread and sort it).
CREATE INDEX messages_of_conversation ON messages (thread_id, conversation_id, seq);

-- Takes the thread's lease (when p_lease_token is given), finds or opens the conversation, stores the user's message
-- with its message.created event (when p_message_id is given) and returns the conversation's latest messages and
-- the event's seq. Returns no row, having changed nothing, when another live holder has the lease.
CREATE FUNCTION parley_open_turn(
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
    INSERT INTO messages (id, thread_id, seq, conversation_id, role, content, extras)
    VALUES (p_message_id, p_thread_id, v_seq, v_conversation, 'user', p_content, p_extras);
    INSERT INTO thread_events (thread_id, seq, type, payload)
    VALUES (p_thread_id, v_event, 'message.created', jsonb_build_object('message', jsonb_build_object(
      'message_id', p_message_id, 'role', 'user', 'message', p_content, 'conversation_id', v_conversation)));
  END IF;

  RETURN QUERY
    SELECT v_conversation, coalesce(jsonb_agg(jsonb_build_object('role', latest.role, 'content', latest.content) ORDER BY latest.seq), '[]'::jsonb), v_event
      FROM (SELECT m.seq, m.role, m.content FROM messages m
             WHERE m.thread_id = p_thread_id AND m.conversation_id = v_conversation
             ORDER BY m.seq DESC LIMIT p_history_limit) latest;
END
$$;

-- Stores the reply with its message.created event, bills it, and releases the lease (when p_lease_token still holds
-- it); returns the event's seq and whether the lease was released. Durable: its commit waits for the disk, and
-- flushes the user's message with it.
CREATE FUNCTION parley_close_turn(
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
  INSERT INTO messages (id, thread_id, seq, conversation_id, role, content, extras)
  VALUES (p_message_id, p_thread_id, v_seq, p_conversation_id, 'assistant', p_content, p_extras);
  INSERT INTO thread_events (thread_id, seq, type, payload)
  VALUES (p_thread_id, v_event, 'message.created', jsonb_build_object('message', jsonb_build_object(
    'message_id', p_message_id, 'role', 'assistant', 'message', p_content, 'conversation_id', p_conversation_id)));
  RETURN QUERY SELECT v_event, v_released;
END
$$;
