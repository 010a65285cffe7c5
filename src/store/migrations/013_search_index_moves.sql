-- The search indexer's move (migration 010) wrote three records per message besides the index's own: the row lock of
-- `FOR UPDATE SKIP LOCKED` on the queued row, its delete, and the confirmation of the speculative insert of
-- `ON CONFLICT`. Now the instances move one batch at a time, under a transaction-level advisory lock (key 7352002,
-- beside the migrations' 7352001): an instance whose round comes while another moves a batch waits for it (tens of
-- milliseconds), then takes what is left. So the queued rows need no row locks; and a re-queued message (one edited
-- by hand) has its indexed row deleted before a plain insert.
CREATE OR REPLACE FUNCTION parley_index_queued_messages(p_limit integer) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  v_threads text[];
  v_seqs bigint[];
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  PERFORM pg_advisory_xact_lock(7352002);
  WITH taken AS (
    DELETE FROM message_search_queue q
     WHERE q.ctid IN (SELECT queued.ctid FROM message_search_queue queued LIMIT p_limit)
    RETURNING q.thread_id, q.seq
  )
  SELECT array_agg(taken.thread_id), array_agg(taken.seq) INTO v_threads, v_seqs FROM taken;
  IF v_seqs IS NULL THEN
    RETURN 0;
  END IF;
  DELETE FROM message_search s USING unnest(v_threads, v_seqs) AS t(thread_id, seq) WHERE s.thread_id = t.thread_id AND s.seq = t.seq;
  INSERT INTO message_search (thread_id, seq, content)
  SELECT DISTINCT ON (m.thread_id, m.seq) m.thread_id, m.seq, m.content
    FROM unnest(v_threads, v_seqs) AS t(thread_id, seq) JOIN messages m ON m.thread_id = t.thread_id AND m.seq = t.seq;
  RETURN cardinality(v_seqs);
END
$$;
