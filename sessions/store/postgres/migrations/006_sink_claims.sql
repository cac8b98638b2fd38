-- sink_claims: which holder (replica) renders a sink's output of a session
-- now, so replicas sharing the database post each reply once, in order. A
-- row outlives its claim: epoch only grows, so a write fenced with an
-- older epoch is refused for good.
--   sink        the sink's name (a provider: "slack")
--   session_id  the session
--   holder      the holder of the claim; NULL once released
--   epoch       the grant counter: each grant adds one. SaveSinkPosition
--               is refused unless its claim's epoch equals this, checked
--               under this row's lock in the write's transaction
--   expires_at  the claim's expiry by the database's clock (now()), never
--               a replica's; NULL once released
CREATE TABLE sink_claims (
    sink       text COLLATE "C" NOT NULL,
    session_id text COLLATE "C" NOT NULL,
    holder     text,
    epoch      bigint NOT NULL,
    expires_at timestamptz,
    PRIMARY KEY (sink, session_id)
);
