-- Voice calls, their lifecycle and the thread events stream. See docs/voice.md.

CREATE TABLE calls (
  id text PRIMARY KEY,
  organization_id uuid NOT NULL REFERENCES organizations(id),
  thread_id text NOT NULL REFERENCES threads(id),
  project_id uuid NOT NULL REFERENCES projects(id),
  config_version_id uuid NOT NULL,
  call_type text NOT NULL CHECK (call_type IN ('phone_call', 'web_call')),
  direction text CHECK (direction IN ('inbound', 'outbound')),
  status text NOT NULL CHECK (status IN ('queued', 'scheduled', 'ongoing', 'ended', 'error')),
  from_number text,
  to_number text,
  voice_provider_account_id uuid,
  scheduled_for timestamptz,
  conversation_id integer,
  started_at timestamptz,
  ended_at timestamptz,
  disconnection_reason text,
  -- the instance that runs the call's live part (its loop lives in that process), and when it last vouched for it
  owner text,
  heartbeat_at timestamptz,
  -- web calls: a hash of the join token and the moment the client must have joined by
  access_token_hash text,
  join_deadline timestamptz,
  transcript_object jsonb,
  recording_key text,
  call_analysis jsonb,
  processed_at timestamptz,
  -- to the millisecond, as the interface shows it, so that a created_at read back is an exact to_date bound
  created_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', clock_timestamp())
);

-- One active phone call per thread, enforced by the database rather than by a check that could race.
CREATE UNIQUE INDEX calls_one_active_phone_call ON calls (thread_id)
  WHERE call_type = 'phone_call' AND status IN ('queued', 'scheduled', 'ongoing');
CREATE INDEX calls_listing ON calls (organization_id, created_at DESC, id DESC);
CREATE INDEX calls_of_thread ON calls (thread_id, created_at DESC);
CREATE INDEX calls_live ON calls (heartbeat_at) WHERE status IN ('queued', 'ongoing');

-- A call's utterances are messages of its thread; this finds them again to render the recording.
CREATE INDEX messages_of_call ON messages ((extras->>'call_id')) WHERE extras ? 'call_id';

ALTER TABLE threads ADD COLUMN last_event_seq bigint NOT NULL DEFAULT 0;

CREATE TABLE thread_events (
  thread_id text NOT NULL REFERENCES threads(id),
  seq bigint NOT NULL,
  type text NOT NULL,
  payload jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (thread_id, seq)
);
