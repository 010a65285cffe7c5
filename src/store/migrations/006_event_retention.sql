-- Old thread events are deleted after EVENTS_RETENTION_HOURS (domain/events.ts). Events are appended in time order,
-- so a BRIN index finds the old ones for next to nothing per insert.
CREATE INDEX thread_events_created_at ON thread_events USING brin (created_at);
