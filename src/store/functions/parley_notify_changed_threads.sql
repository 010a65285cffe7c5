-- Push invalidation of the in-memory caches of every instance (domain/cache/invalidation.ts): the statement trigger of
-- updates and deletes of messages and inserts of conversations (migration 005) NOTIFYs `thread:<id>` for each thread
-- touched. PostgreSQL sends them on commit, once per distinct payload per transaction. The chat turn's statements set
-- parley.announced_after_commit: their caller announces the thread's change on the events channel once they have
-- committed, which every instance's caches hear too, because a NOTIFY inside their durable transaction would hold a
-- database-wide lock until the disk flush.
CREATE OR REPLACE FUNCTION parley_notify_changed_threads() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('parley.announced_after_commit', true) = 'on' THEN
    RETURN NULL;
  END IF;
  PERFORM pg_notify('parley_cache', 'thread:' || thread_id) FROM (SELECT DISTINCT thread_id FROM changed) AS threads;
  RETURN NULL;
END
$$;
