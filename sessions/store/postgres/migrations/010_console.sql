-- The console's sign-ins and failed sign-ins (core.ConsoleStore). Both
-- are ephemeral: store copy neither copies them nor requires them empty,
-- and Sweep (SweepConsole) deletes them once expired or old. Times are
-- kept to the millisecond (record.ConsoleTime), as in the bbolt store.

-- console_sessions: one row per console sign-in, shared by the replicas,
-- so a sign-out on one revokes the cookie on all.
--   id          the hex SHA-256 of the cookie's secret (never the secret).
--   expires_at  the sign-in's expiry, a copy of body's: it is no longer
--               good at this instant; SweepConsole deletes by it.
--   body        the core.ConsoleSession as JSON.
CREATE TABLE console_sessions (
    id         text COLLATE "C" PRIMARY KEY,
    expires_at timestamptz NOT NULL,
    body       bytea NOT NULL
);
-- SweepConsole finds the expired sign-ins without reading the live ones.
CREATE INDEX console_sessions_expires_at ON console_sessions (expires_at);

-- console_sign_in_failures: one row per sign-in attempt counted before its
-- token is checked (a row is deleted again when the attempt signs in).
-- ReserveSignIn counts and inserts under a transaction-level advisory lock
-- on the address, so attempts from one address, made on any replica at
-- once, pass the limit no further.
--   id       the row's number, for SweepConsole's batches.
--   address  the client address the sign-in came from.
--   at       when it failed.
CREATE TABLE console_sign_in_failures (
    id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    address text COLLATE "C" NOT NULL,
    at      timestamptz NOT NULL
);
-- A count reads one address's failures in a window.
CREATE INDEX console_sign_in_failures_address_at ON console_sign_in_failures (address, at);
-- SweepConsole finds the old failures of every address.
CREATE INDEX console_sign_in_failures_at ON console_sign_in_failures (at);
