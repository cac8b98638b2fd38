-- Attach tokens (core.AttachTokenStore): per-session tokens that let one
-- named person read and steer one session from their editor.
--
-- attach_tokens: one row per token, revoked ones kept.
--   id          the token's id (atk_…).
--   session_id  the session it opens.
--   body        the token's JSON (core.AttachToken): person, issuer,
--               times, and the sha256 of the secret (never the secret).
CREATE TABLE attach_tokens (
    id         text PRIMARY KEY,
    session_id text NOT NULL,
    body       bytea NOT NULL
);
CREATE INDEX attach_tokens_session ON attach_tokens (session_id, id);
