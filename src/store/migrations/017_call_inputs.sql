-- What a phone-call request gives the agent for that call (decisions.md, Tools): the appointment opening it is about,
-- a prompt variable and part of each tool request; and a verification code, a prompt variable for that call only,
-- kept sealed with the server's encryption key (AES-256-GCM, as the projects' secrets are) and never returned.
ALTER TABLE calls ADD COLUMN appointment_opening_id text;
ALTER TABLE calls ADD COLUMN verification_code_sealed text;
