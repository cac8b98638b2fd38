-- Links (core.LinkStore): other origin keys that route to a session.
--
-- session_links: one row per link.
--   key         the origin key (github:<owner>/<repo>#<n>, slack:…, linear:…),
--               unique: a key routes to one session.
--   session_id  the session it routes to.
-- A key is either a session's external_key or a link, never both: the
-- writes that claim a key (a session's create with an external key, a
-- link's add) take a transaction-level advisory lock on it first, then
-- look in both places.
CREATE TABLE session_links (
    key        text PRIMARY KEY,
    session_id text NOT NULL
);
CREATE INDEX session_links_session ON session_links (session_id);
