CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE organizations (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL REFERENCES organizations(id),
  key_hash text NOT NULL UNIQUE,
  display text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz,
  last_used_at timestamptz
);

CREATE TABLE projects (
  id uuid PRIMARY KEY,
  organization_id uuid NOT NULL REFERENCES organizations(id),
  name text NOT NULL,
  current_config_version_id uuid,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (organization_id, name)
);

CREATE TABLE project_config_versions (
  id uuid PRIMARY KEY,
  project_id uuid NOT NULL REFERENCES projects(id),
  organization_id uuid NOT NULL REFERENCES organizations(id),
  version integer NOT NULL,
  config jsonb NOT NULL,
  -- provider secrets (agent.api_key), AES-256-GCM encrypted; never returned
  encrypted_secrets text,
  created_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (project_id, version)
);

CREATE TABLE threads (
  id text PRIMARY KEY,
  organization_id uuid NOT NULL REFERENCES organizations(id),
  type text NOT NULL,
  alias text,
  timezone text NOT NULL,
  project_id uuid REFERENCES projects(id),
  context jsonb NOT NULL DEFAULT '{}'::jsonb,
  last_message_seq bigint NOT NULL DEFAULT 0,
  last_conversation_id integer NOT NULL DEFAULT 0,
  active_conversation_id integer,
  billable_messages bigint NOT NULL DEFAULT 0,
  billable_message_cost numeric(20, 8) NOT NULL DEFAULT 0,
  voice_seconds numeric(20, 3) NOT NULL DEFAULT 0,
  voice_cost numeric(20, 8) NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX threads_alias ON threads (organization_id, alias) WHERE alias IS NOT NULL;

CREATE TABLE conversations (
  thread_id text NOT NULL REFERENCES threads(id),
  conversation_id integer NOT NULL,
  project_id uuid REFERENCES projects(id),
  started_at timestamptz NOT NULL DEFAULT now(),
  ended_at timestamptz,
  PRIMARY KEY (thread_id, conversation_id)
);

CREATE TABLE messages (
  id text PRIMARY KEY,
  thread_id text NOT NULL REFERENCES threads(id),
  seq bigint NOT NULL,
  conversation_id integer NOT NULL,
  role text NOT NULL,
  content text NOT NULL,
  extras jsonb NOT NULL DEFAULT '{}'::jsonb,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  UNIQUE (thread_id, seq)
);
CREATE INDEX messages_content_trgm ON messages USING gin (content gin_trgm_ops);

CREATE TABLE server_settings (
  key text PRIMARY KEY,
  value text NOT NULL
);

-- The chat lease of a thread: who holds it (a random token), which database backend vouches that the holder
-- lives (its instance's dedicated connection), and until when. See store/thread-locks.ts.
ALTER TABLE threads ADD COLUMN lock_token text;
ALTER TABLE threads ADD COLUMN lock_pid integer;
ALTER TABLE threads ADD COLUMN lock_until timestamptz;
