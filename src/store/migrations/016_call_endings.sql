-- A call becomes ended once, when its record is complete (decisions.md, Calls). An end signalled while the instance
-- carrying the call's audio has still to store its recording waits here, where every instance sees it: the carrier
-- ends the call with its record, or the supervisor ends it without one when the carrier cannot deliver in time.
ALTER TABLE calls ADD COLUMN ending_reason text;
ALTER TABLE calls ADD COLUMN ending_since timestamptz;
CREATE INDEX calls_ending ON calls (ending_since) WHERE ending_reason IS NOT NULL AND status = 'ongoing';

-- A vendor's own times are authoritative whenever they arrive: the call's length as the vendor billed it (Twilio's
-- CallDuration), and the seconds of voice usage already charged for the call, so that a later vendor time charges
-- only the difference.
ALTER TABLE calls ADD COLUMN vendor_duration_seconds double precision;
ALTER TABLE calls ADD COLUMN billed_seconds double precision;
