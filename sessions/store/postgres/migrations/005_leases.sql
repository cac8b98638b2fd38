-- session_leases: which runtime (replica) runs a session's turns now. A
-- row outlives its lease: epoch only grows, so a write fenced with an
-- older epoch is refused for good.
--   session_id   the session
--   holder       the runtime holding the lease; NULL once released
--   epoch        the grant counter: each grant adds one. Appends that
--                carry an epoch are refused unless it equals this, checked
--                under the session's row lock (which TakeLease takes too)
--   expires_at   the lease's expiry by the database's clock (now()), never
--                a replica's; NULL once released
--   last_holder  the holder of the latest grant: the session's next turn
--                prefers it (its sandbox is there) while its heartbeat is
--                fresh and it is not draining
CREATE TABLE session_leases (
    session_id  text COLLATE "C" PRIMARY KEY,
    holder      text,
    epoch       bigint NOT NULL,
    expires_at  timestamptz,
    last_holder text
);

-- replicas: each runtime's heartbeat.
--   holder      the runtime
--   expires_at  when its heartbeat runs out (database clock)
--   draining    true while it stops: its sessions may go elsewhere at once
CREATE TABLE replicas (
    holder     text PRIMARY KEY,
    expires_at timestamptz NOT NULL,
    draining   boolean NOT NULL DEFAULT false
);
