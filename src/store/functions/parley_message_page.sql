-- The history page reads (store/messages-store.ts, `olderThanOrAt` and `newerThan`) as functions whose statements
-- always run on their generic plan, planned once per connection. As a prepared statement, PostgreSQL planned the read
-- again at every execution for a long thread: for the thread that is the most common value of `messages.thread_id`,
-- the custom plan's cost (20 of 100,000 rows) is below the generic plan's (20 of the average thread), so the plan cache never kept the
-- generic one, and planning took a quarter of the read (the store benchmark's latest 20 of 100k: 0.174 ms planned
-- each time, 0.124 ms on the kept plan, against 0.128 ms for the bare SELECT). Both plans are the same backward scan
-- of `messages (thread_id, seq)`; a page without a cursor is bounded by the largest bigint, so that the bound stays an
-- index condition (with `p_at_most IS NULL OR ...` it would be a filter over the whole thread).
-- Consecutive messages mostly share a conversation, so the conversation's end is looked up by key only where the
-- conversation differs from the newer message's; the caller copies it down the run (one or two lookups a page).
CREATE OR REPLACE FUNCTION parley_message_page(p_thread_id text, p_at_most bigint, p_limit integer)
RETURNS TABLE (id text, seq bigint, conversation_id integer, role text, content text, extras jsonb, created_at timestamptz, conversation_ended_at timestamptz)
LANGUAGE plpgsql STABLE SET plan_cache_mode = force_generic_plan AS $$
BEGIN
  RETURN QUERY
    SELECT p.id, p.seq, p.conversation_id, p.role, p.content, p.extras, p.created_at,
           CASE WHEN p.conversation_id IS DISTINCT FROM lag(p.conversation_id) OVER (ORDER BY p.seq DESC)
                THEN (SELECT c.ended_at FROM conversations c WHERE c.thread_id = p_thread_id AND c.conversation_id = p.conversation_id) END
      FROM (SELECT m.id, m.seq, m.conversation_id, m.role, m.content, m.extras, m.created_at
              FROM messages m WHERE m.thread_id = p_thread_id AND m.seq <= coalesce(p_at_most, 9223372036854775807)
             ORDER BY m.seq DESC LIMIT p_limit) p
     ORDER BY p.seq DESC;
END
$$;
