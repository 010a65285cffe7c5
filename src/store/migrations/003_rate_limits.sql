-- Fixed-window request counters, shared by instances on one PostgreSQL when no Redis is configured.
CREATE TABLE rate_limit_windows (
  key text NOT NULL,
  window_start timestamptz NOT NULL,
  hits integer NOT NULL,
  PRIMARY KEY (key, window_start)
);
