-- What ListSessions filters by beside status and agent (core.SessionFilter),
-- copied from each session as the other columns are, written with the body.
--   provider    the session's origin provider ("slack", "github",
--               "linear"), "api" for a session without an origin
--               (core.Session.Provider).
--   tenant      the session's tenant (core.Session.Tenant), NULL for none.
--   first_text  the text of the session's first user message that the
--               system did not write, at most its first 500 bytes
--               (record.FirstText); NULL until one is queued. Set once:
--               later messages leave it. The text filter reads it,
--               ignoring case, instead of the session's log.
-- Rows written before this migration get them from their body, their log
-- and their queued inputs.
ALTER TABLE sessions
    ADD COLUMN provider text COLLATE "C",
    ADD COLUMN tenant text COLLATE "C",
    ADD COLUMN first_text text;

UPDATE sessions SET
    provider = coalesce(nullif(convert_from(body, 'UTF8')::jsonb #>> '{origin,provider}', ''), 'api'),
    tenant = nullif(convert_from(body, 'UTF8')::jsonb ->> 'tenant', '');

-- The first user message: from the log, else from the queue; the text
-- cut to whole characters within 500 bytes, as the store cuts it.
WITH messages AS (
    SELECT session_id, 0 AS queued, seq AS pos, convert_from(body, 'UTF8')::jsonb AS e FROM events
    UNION ALL
    SELECT session_id, 1, pos, convert_from(body, 'UTF8')::jsonb FROM pending_inputs
), firsts AS (
    SELECT DISTINCT ON (session_id) session_id, coalesce(e #>> '{body,text}', '') AS text
    FROM messages
    WHERE e ->> 'type' = 'user.message' AND e ->> 'actor' IS DISTINCT FROM 'system'
    ORDER BY session_id, queued, pos
)
UPDATE sessions s SET first_text = (
    SELECT left(f.text, n) FROM generate_series(least(length(f.text), 500), 0, -1) AS n
    WHERE octet_length(left(f.text, n)) <= 500 LIMIT 1
)
FROM firsts f WHERE s.id = f.session_id;

-- ListSessions filtered by provider or by tenant reads one of these in
-- id order from the cursor, as by status or agent.
CREATE INDEX sessions_provider_id ON sessions (provider, id);
CREATE INDEX sessions_tenant_id ON sessions (tenant, id);
