-- Request counters move to rate-limiter-flexible, in the table layout its PostgreSQL backend uses.
DROP TABLE rate_limit_windows;
CREATE TABLE rate_limits (
  key varchar(255) PRIMARY KEY,
  points integer NOT NULL DEFAULT 0,
  expire bigint
);
