-- The row trigger of updates and deletes of what the caches show (threads, conversations, projects, their versions,
-- API keys): NOTIFYs the tag of the row before and after the change (`thread:<id>`, `organization:<id>` or
-- `api_key:<id>`), see domain/cache/invalidation.ts. The triggers themselves are in migration 005.
CREATE OR REPLACE FUNCTION parley_notify_changed_row() RETURNS trigger LANGUAGE plpgsql AS $$
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
