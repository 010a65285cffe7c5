-- A chat turn's second statement (store/turns-store.ts `close`, after the model answered): stores the reply with its
-- message.created event, bills it, and releases the lease (when p_lease_token still holds it); returns the event's
-- seq and whether the lease was released. Like parley_open_turn it sends no NOTIFY; the caller announces the event.
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
