-- The page of messages after a cursor (`?newer=true`), oldest first, on the same terms.
CREATE OR REPLACE FUNCTION parley_message_page_after(p_thread_id text, p_after bigint, p_limit integer)
RETURNS TABLE (id text, seq bigint, conversation_id integer, role text, content text, extras jsonb, created_at timestamptz, conversation_ended_at timestamptz)
LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan AS $$
BEGIN
  RETURN QUERY
    SELECT p.id, p.seq, p.conversation_id, p.role, p.content, p.extras, p.created_at,
           CASE WHEN p.conversation_id IS DISTINCT FROM lag(p.conversation_id) OVER (ORDER BY p.seq)
                THEN (SELECT c.ended_at FROM conversations c WHERE c.thread_id = p_thread_id AND c.conversation_id = p.conversation_id) END
      FROM (SELECT m.id, m.seq, m.conversation_id, m.role, m.content, m.extras, m.created_at
              FROM messages m WHERE m.thread_id = p_thread_id AND m.seq > p_after ORDER BY m.seq LIMIT p_limit) p
     ORDER BY p.seq;
END
$$;
