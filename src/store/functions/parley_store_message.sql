-- How a message is stored with its message.created event, used by a chat turn's two statements and by a call's
-- utterances (store/calls-store.ts). The callers number both (the thread row's counters) and announce the event after
-- their commit. The event refers to the message (`message_seq`, see store/events-store.ts) rather than copying it.
-- `parley.message_writer` is on only for this insert, so that the insert trigger of `messages` skips what this writer
-- announces itself and still fires for any later insert in the same transaction.
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
