-- Simulation runs (the `simulate` object of POST /chat) stored with `create: true`: the conversation lives in the
-- SIMULATION thread `thread_id`; the run keeps its settings, its turns as returned, and its evaluation (set after
-- the run is stored: the judge may fail, and the conversation stays readable then). A dry run stores nothing.
CREATE TABLE simulations (
  id text PRIMARY KEY,
  organization_id uuid NOT NULL REFERENCES organizations(id),
  project_id uuid NOT NULL REFERENCES projects(id),
  config_version_id uuid NOT NULL REFERENCES project_config_versions(id),
  source_thread_id text NOT NULL REFERENCES threads(id),
  thread_id text NOT NULL REFERENCES threads(id),
  settings jsonb NOT NULL,
  turns jsonb NOT NULL,
  stop_reason text NOT NULL CHECK (stop_reason IN ('max_turns', 'user_ended', 'agent_ended')),
  evaluation jsonb,
  created_at timestamptz NOT NULL DEFAULT now()
);
