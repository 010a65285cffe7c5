-- A call's maximum length, fixed when it is created from the configuration version it is created with
-- (`voice.max_call_seconds`, or `voice.inbound.max_call_seconds` for an inbound call), so that any instance can tell
-- which ongoing calls are past it: the one that carries a call ends it on time, and every instance's sweep ends those
-- whose carrier is gone (see CallSupervisor).
ALTER TABLE calls ADD COLUMN max_call_seconds integer NOT NULL DEFAULT 600;
UPDATE calls c SET max_call_seconds = coalesce(
  (SELECT CASE WHEN c.direction = 'inbound' THEN coalesce((v.config #>> '{voice,inbound,max_call_seconds}')::integer, (v.config #>> '{voice,max_call_seconds}')::integer)
               ELSE (v.config #>> '{voice,max_call_seconds}')::integer END
     FROM project_config_versions v WHERE v.id = c.config_version_id),
  600);
ALTER TABLE calls ALTER COLUMN max_call_seconds DROP DEFAULT;
CREATE INDEX calls_ongoing_since ON calls (started_at) WHERE status = 'ongoing' AND ending_reason IS NULL;
