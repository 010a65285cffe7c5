-- The statement trigger of inserts into `messages` by others than parley_store_message (by hand, a tool's): their
-- threads are announced to the instances' caches (domain/cache/invalidation.ts).
CREATE OR REPLACE FUNCTION parley_messages_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('parley.announced_after_commit', true) IS DISTINCT FROM 'on' THEN
    PERFORM pg_notify('parley_cache', 'thread:' || thread_id) FROM (SELECT DISTINCT thread_id FROM changed) AS threads;
  END IF;
  RETURN NULL;
END
$$;
