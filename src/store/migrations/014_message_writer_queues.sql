-- Parley's own writer of messages, `parley_store_message` (chat turns and calls), queues the message for the search
-- index and announces the thread's change itself, and the insert trigger of migration 012 no longer fires for its
-- inserts: the trigger collected a transition table and ran a PL/pgSQL function with two statements for every stored
-- message, about a tenth of a chat turn's database time (measured by the store benchmark). The trigger stays for every
-- other insert (by hand, or a tool's), which is queued and announced as before.
-- `parley.message_writer` is on only for the duration of the writer's own insert, so that another insert later in the
-- same transaction still fires the trigger.
DROP TRIGGER messages_inserted ON messages;
CREATE TRIGGER messages_inserted AFTER INSERT ON messages REFERENCING NEW TABLE AS changed
  FOR EACH STATEMENT WHEN (current_setting('parley.message_writer', true) IS DISTINCT FROM 'on')
  EXECUTE FUNCTION parley_messages_inserted();

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
  INSERT INTO message_search_queue (thread_id, seq) VALUES (p_thread_id, p_seq);
  INSERT INTO thread_events (thread_id, seq, type, message_seq, payload)
  VALUES (p_thread_id, p_event_seq, 'message.created', p_seq, nullif(p_event_extra, '{}'::jsonb));
  -- The chat turn's caller announces the change after its commit (migration 012); a call's messages are announced
  -- here, as the trigger did.
  IF current_setting('parley.announced_after_commit', true) IS DISTINCT FROM 'on' THEN
    PERFORM pg_notify('parley_cache', 'thread:' || p_thread_id);
  END IF;
END
$$;
