-- Push invalidation of the in-memory caches of every instance (src/domain/cache/invalidation.ts). Triggers send the
-- NOTIFYs, so that no write path can forget one; the payload is the tag of what changed: `thread:<id>`,
-- `organization:<id>` or `api_key:<id>`. PostgreSQL sends them on commit, once per distinct payload per transaction.
-- Only columns that change what a cache shows fire: the lease columns of a thread row (updated by every chat turn,
-- see store/thread-locks.ts), its counters and usage do not, since a NOTIFY takes a global lock at commit.

-- The chat turn's statements (migration 004) set parley.announced_after_commit: their caller announces the thread's
-- change on the events channel once they have committed, which every instance's caches hear too, because a NOTIFY
-- inside their durable transaction would hold a database-wide lock until the disk flush.
CREATE FUNCTION parley_notify_changed_threads() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF current_setting('parley.announced_after_commit', true) = 'on' THEN
    RETURN NULL;
  END IF;
  PERFORM pg_notify('parley_cache', 'thread:' || thread_id) FROM (SELECT DISTINCT thread_id FROM changed) AS threads;
  RETURN NULL;
END
$$;

CREATE FUNCTION parley_notify_changed_row() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  old_tag text;
  new_tag text;
BEGIN
  IF TG_TABLE_NAME = 'threads' THEN
    old_tag := 'thread:' || OLD.id;
    -- What a chat turn reads of the thread (domain/chat.ts) has a tag of its own, so that a new conversation keeps it.
    IF TG_OP = 'DELETE' OR OLD.context IS DISTINCT FROM NEW.context OR OLD.timezone IS DISTINCT FROM NEW.timezone
       OR OLD.organization_id IS DISTINCT FROM NEW.organization_id THEN
      PERFORM pg_notify('parley_cache', 'thread-setup:' || OLD.id);
    END IF;
  ELSIF TG_TABLE_NAME = 'conversations' THEN
    old_tag := 'thread:' || OLD.thread_id;
  ELSIF TG_TABLE_NAME = 'api_keys' THEN
    old_tag := 'api_key:' || OLD.id;
  ELSE
    old_tag := 'organization:' || OLD.organization_id;
  END IF;
  PERFORM pg_notify('parley_cache', old_tag);
  IF TG_OP = 'UPDATE' AND TG_TABLE_NAME IN ('projects', 'project_config_versions') THEN
    new_tag := 'organization:' || NEW.organization_id;
    IF new_tag <> old_tag THEN
      PERFORM pg_notify('parley_cache', new_tag);
    END IF;
  END IF;
  RETURN NULL;
END
$$;

-- Messages: per statement, so that a bulk load of a million rows sends one NOTIFY per thread, not a million.
CREATE TRIGGER messages_inserted AFTER INSERT ON messages REFERENCING NEW TABLE AS changed
  FOR EACH STATEMENT EXECUTE FUNCTION parley_notify_changed_threads();
CREATE TRIGGER messages_updated AFTER UPDATE ON messages REFERENCING NEW TABLE AS changed
  FOR EACH STATEMENT EXECUTE FUNCTION parley_notify_changed_threads();
CREATE TRIGGER messages_deleted AFTER DELETE ON messages REFERENCING OLD TABLE AS changed
  FOR EACH STATEMENT EXECUTE FUNCTION parley_notify_changed_threads();

-- Conversations: an end time shows on every message of the conversation and decides `is_locked`.
CREATE TRIGGER conversations_inserted AFTER INSERT ON conversations REFERENCING NEW TABLE AS changed
  FOR EACH STATEMENT EXECUTE FUNCTION parley_notify_changed_threads();
CREATE TRIGGER conversations_updated AFTER UPDATE ON conversations FOR EACH ROW
  WHEN (OLD.ended_at IS DISTINCT FROM NEW.ended_at OR OLD.project_id IS DISTINCT FROM NEW.project_id OR OLD.thread_id <> NEW.thread_id)
  EXECUTE FUNCTION parley_notify_changed_row();
CREATE TRIGGER conversations_deleted AFTER DELETE ON conversations FOR EACH ROW EXECUTE FUNCTION parley_notify_changed_row();

-- Threads: ownership, default project and conversation state (`is_locked`), and what a chat turn reads of the thread
-- (context, time zone); not the lease, counters or usage.
CREATE TRIGGER threads_updated AFTER UPDATE OF organization_id, project_id, active_conversation_id, last_conversation_id, context, timezone ON threads FOR EACH ROW
  WHEN (OLD.organization_id IS DISTINCT FROM NEW.organization_id OR OLD.project_id IS DISTINCT FROM NEW.project_id
        OR OLD.active_conversation_id IS DISTINCT FROM NEW.active_conversation_id OR OLD.last_conversation_id IS DISTINCT FROM NEW.last_conversation_id
        OR OLD.context IS DISTINCT FROM NEW.context OR OLD.timezone IS DISTINCT FROM NEW.timezone)
  EXECUTE FUNCTION parley_notify_changed_row();
CREATE TRIGGER threads_deleted AFTER DELETE ON threads FOR EACH ROW EXECUTE FUNCTION parley_notify_changed_row();

-- Projects: a new current version may flip `lock_on_end` for any thread of the organization. Versions are immutable;
-- should one ever change, the same holds.
CREATE TRIGGER projects_updated AFTER UPDATE OF current_config_version_id, organization_id ON projects FOR EACH ROW
  WHEN (OLD.current_config_version_id IS DISTINCT FROM NEW.current_config_version_id OR OLD.organization_id <> NEW.organization_id)
  EXECUTE FUNCTION parley_notify_changed_row();
CREATE TRIGGER projects_deleted AFTER DELETE ON projects FOR EACH ROW EXECUTE FUNCTION parley_notify_changed_row();
CREATE TRIGGER project_config_versions_updated AFTER UPDATE ON project_config_versions FOR EACH ROW EXECUTE FUNCTION parley_notify_changed_row();
CREATE TRIGGER project_config_versions_deleted AFTER DELETE ON project_config_versions FOR EACH ROW EXECUTE FUNCTION parley_notify_changed_row();

-- API keys: revocation (every time it is asked for, since the revoking instance waits to hear it), or any change of
-- what a key opens. `last_used_at` does not fire.
CREATE TRIGGER api_keys_updated AFTER UPDATE OF revoked_at, key_hash, organization_id ON api_keys FOR EACH ROW
  EXECUTE FUNCTION parley_notify_changed_row();
CREATE TRIGGER api_keys_deleted AFTER DELETE ON api_keys FOR EACH ROW EXECUTE FUNCTION parley_notify_changed_row();
