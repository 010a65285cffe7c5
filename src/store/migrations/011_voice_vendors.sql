-- Calls placed through a telephony vendor (Twilio, Retell). See docs/voice.md.

-- Which provider carries the call, and the vendor's own id for it (Twilio's CallSid, Retell's call_id), by which
-- the vendor's webhooks and sockets name it.
ALTER TABLE calls ADD COLUMN provider text NOT NULL DEFAULT 'simulated';
ALTER TABLE calls ADD COLUMN provider_call_id text;
-- A recording the vendor keeps (Retell's URL), for calls whose recording is not Parley's own file.
ALTER TABLE calls ADD COLUMN vendor_recording_url text;
CREATE UNIQUE INDEX calls_provider_call ON calls (provider, provider_call_id) WHERE provider_call_id IS NOT NULL;

-- Vendor webhooks already applied, by a digest of what was signed: a delivery repeated or replayed within the
-- signature's window finds its row and changes nothing.
CREATE TABLE voice_webhook_deliveries (
  provider text NOT NULL,
  digest text NOT NULL,
  received_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (provider, digest)
);
CREATE INDEX voice_webhook_deliveries_age ON voice_webhook_deliveries (received_at);
