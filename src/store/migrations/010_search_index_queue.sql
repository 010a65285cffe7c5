-- The trigram index of message text, off the chat turn's write path. Keeping the pg_trgm GIN index on `messages` made
-- every stored message add ~one index entry per three characters to that index (about a quarter of a turn's cost).
-- Now a stored message only appends its key to `message_search_queue` (a small heap table without indexes);
-- store/search-indexer.ts moves queued messages into `message_search`, which carries the trigram index, in batches
-- (every SEARCH_INDEX_INTERVAL_MS, 200 ms by default). Search stays exact meanwhile: it reads `message_search` and the
-- queued messages of its thread (store/messages-store.ts), and a message is in exactly one of the two at any snapshot,
-- since the indexer deletes it from the queue and adds it to the index in one transaction.

CREATE TABLE message_search (
  thread_id text NOT NULL,
  seq bigint NOT NULL,
  content text NOT NULL,
  PRIMARY KEY (thread_id, seq)
);
CREATE INDEX message_search_content_trgm ON message_search USING gin (content gin_trgm_ops);

-- Drained whole every few hundred milliseconds: vacuumed after every thousand dead rows rather than after 20% of the
-- table, so that the scan of the queue by a search stays a scan of a few pages.
CREATE TABLE message_search_queue (
  thread_id text NOT NULL,
  seq bigint NOT NULL
) WITH (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000, autovacuum_vacuum_insert_scale_factor = 0, autovacuum_vacuum_insert_threshold = 1000);

INSERT INTO message_search (thread_id, seq, content) SELECT thread_id, seq, content FROM messages;
DROP INDEX messages_content_trgm;

-- Every write path enqueues (chat turns, calls, the legacy interface, plain SQL): a trigger cannot be forgotten.
-- Per statement, so that a bulk load enqueues in one statement.
CREATE FUNCTION parley_enqueue_search() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO message_search_queue (thread_id, seq) SELECT thread_id, seq FROM changed;
  RETURN NULL;
END
$$;

CREATE TRIGGER messages_search_inserted AFTER INSERT ON messages REFERENCING NEW TABLE AS changed
  FOR EACH STATEMENT EXECUTE FUNCTION parley_enqueue_search();
-- Messages are never edited by Parley; should one be (by hand), it is indexed again.
CREATE FUNCTION parley_enqueue_search_of_row() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  INSERT INTO message_search_queue (thread_id, seq) VALUES (NEW.thread_id, NEW.seq);
  RETURN NULL;
END
$$;

CREATE TRIGGER messages_search_updated AFTER UPDATE OF content, thread_id, seq ON messages FOR EACH ROW
  WHEN (OLD.content IS DISTINCT FROM NEW.content OR OLD.thread_id IS DISTINCT FROM NEW.thread_id OR OLD.seq IS DISTINCT FROM NEW.seq)
  EXECUTE FUNCTION parley_enqueue_search_of_row();

-- Moves up to p_limit queued messages into the index in one transaction; returns how many were taken from the queue.
-- SKIP LOCKED lets every instance drain at once without waiting for another. Its commit does not wait for the disk:
-- a crash loses the move as a whole, and the messages are in the queue again.
CREATE FUNCTION parley_index_queued_messages(p_limit integer) RETURNS integer
LANGUAGE plpgsql AS $$
DECLARE
  v_taken integer;
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  WITH taken AS (
    DELETE FROM message_search_queue q
     WHERE q.ctid IN (SELECT queued.ctid FROM message_search_queue queued LIMIT p_limit FOR UPDATE SKIP LOCKED)
    RETURNING q.thread_id, q.seq
  ), indexed AS (
    INSERT INTO message_search (thread_id, seq, content)
    SELECT DISTINCT ON (m.thread_id, m.seq) m.thread_id, m.seq, m.content
      FROM taken JOIN messages m ON m.thread_id = taken.thread_id AND m.seq = taken.seq
    ON CONFLICT (thread_id, seq) DO UPDATE SET content = EXCLUDED.content
    RETURNING 1
  )
  SELECT count(*) INTO v_taken FROM taken;
  RETURN v_taken;
END
$$;
