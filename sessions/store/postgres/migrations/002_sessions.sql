-- The core of the session store: agents, sessions, their logs and queued
-- inputs, dedupe and idempotency keys, the wake queue, status counts and
-- the output sinks' positions.
--
-- Every "body" column holds the record as the JSON the API shows (the
-- bbolt store's bytes: encoding/json without HTML escaping, event bodies
-- compacted), as bytea so it comes back byte for byte. The other columns
-- are copies of what the store looks rows up, filters or orders by; the
-- store writes them together with the body, in one statement.
--
-- Ids, names and keys are text in the "C" collation: they compare byte
-- by byte, so pages, cursors and ties come in the bbolt store's order
-- whatever the database's locale.
--
-- There are no foreign keys: every row of a session is written under the
-- lock of the session's row (SELECT … FOR UPDATE), sessions are never
-- deleted, and a foreign key would cost a lookup per logged event.

-- agents holds the latest version of each agent.
--   id       the agent's id (agt_…).
--   name     the agent's name; unique, so two agents never share one (a
--            rename to a taken name fails on agents_name_key).
--   version  the latest version's number.
--   body     JSON of core.Agent, the latest version.
-- The primary key serves GetAgent by id and ListAgents' pages (id order).
CREATE TABLE agents (
    id      text COLLATE "C" PRIMARY KEY,
    name    text COLLATE "C" NOT NULL CONSTRAINT agents_name_key UNIQUE,
    version integer NOT NULL,
    body    bytea NOT NULL
);

-- agent_versions holds every version of every agent, immutable.
--   agent_id, version  the version's agent and number (1, 2, …).
--   body               JSON of core.Agent as that version was saved.
CREATE TABLE agent_versions (
    agent_id text COLLATE "C" NOT NULL,
    version  integer NOT NULL,
    body     bytea NOT NULL,
    PRIMARY KEY (agent_id, version)
);

-- sessions holds one row per session; the row's lock orders everything
-- written for the session.
--   id            the session's id (ses_…); list pages are in id order.
--   status        the session's status (core.Status), as in body.
--   agent_id      the id of the agent the session runs, as in body.
--   external_key  the origin key that maps to this session (a Slack
--                 thread, a GitHub issue), NULL for API sessions. Unique:
--                 two creators racing on one key end with one session.
--   last_seq      the seq of the last logged event (0: none), as in body;
--                 the next event gets last_seq + 1, assigned under the
--                 row's lock, so a log is gap-free.
--   lease_holder  the runtime that logged the turn.started of the open
--                 turn (AppendRequest.Holder, possibly ''), NULL when no
--                 turn is open; set by turn.started, cleared by
--                 turn.completed and by archive.
--   body          JSON of core.Session: the record, whose status, stop
--                 reason, usage, last seq, turn id and pending action are
--                 the projection of its log.
-- Columns added later go after these; the store names the columns it reads.
CREATE TABLE sessions (
    id           text COLLATE "C" PRIMARY KEY,
    status       text COLLATE "C" NOT NULL,
    agent_id     text COLLATE "C" NOT NULL,
    external_key text COLLATE "C" CONSTRAINT sessions_external_key_key UNIQUE,
    last_seq     bigint NOT NULL DEFAULT 0,
    lease_holder text COLLATE "C",
    body         bytea NOT NULL
);
-- ListSessions filtered by status or by agent reads one of these in id
-- order from the cursor instead of scanning every session.
CREATE INDEX sessions_status_id ON sessions (status, id);
CREATE INDEX sessions_agent_id ON sessions (agent_id, id);
-- OpenTurns reads the few sessions with an open turn.
CREATE INDEX sessions_leased ON sessions (id) WHERE lease_holder IS NOT NULL;

-- events holds the sessions' logs.
--   session_id, seq  the event's session and its place in the log (1, 2,
--                    … gap-free). The primary key serves Events(after,
--                    limit): a range of one session's log in seq order.
--   body             JSON of core.Event as logged.
CREATE TABLE events (
    session_id text COLLATE "C" NOT NULL,
    seq        bigint NOT NULL,
    body       bytea NOT NULL,
    PRIMARY KEY (session_id, seq)
);

-- pending_inputs holds the inputs queued on a session and not yet logged;
-- taking them (Append with TakeInputs) deletes them, archive drops them.
--   session_id, pos  the input's session and its place in the queue
--                    (assigned under the session's lock, increasing). The
--                    primary key reads a session's queue in order.
--   type             the input's type: a take stops at the first
--                    user.interrupt.
--   body             JSON of core.Event with seq 0.
CREATE TABLE pending_inputs (
    session_id text COLLATE "C" NOT NULL,
    pos        bigint NOT NULL,
    type       text NOT NULL,
    body       bytea NOT NULL,
    PRIMARY KEY (session_id, pos)
);

-- session_counts counts sessions per status for CountByStatus, moved in
-- the transaction that changes a status, so counting never scans the
-- sessions. Each status is spread over shards (a session always counts in
-- the same one, picked from its id) so that writes of different sessions
-- rarely wait on one counter row.
--   status  a status (core.Status).
--   shard   0 to 7.
--   n       the number of sessions of the shard in the status.
CREATE TABLE session_counts (
    status text COLLATE "C" NOT NULL,
    shard  smallint NOT NULL,
    n      bigint NOT NULL,
    PRIMARY KEY (status, shard)
);

-- wakes is the wake queue: the sessions the runtime must visit, one wake
-- per session.
--   session_id  the session to visit.
--   due_at      when, in unix nanoseconds (the caller's instant, exactly).
CREATE TABLE wakes (
    session_id text COLLATE "C" PRIMARY KEY,
    due_at     bigint NOT NULL
);
-- DueWakes and NextWake read the queue earliest first.
CREATE INDEX wakes_due ON wakes (due_at, session_id);

-- request_keys holds the dedupe and idempotency keys of writes, recorded
-- in the write's transaction. The primary key makes a key seen once: of two
-- writes racing with one key, the second fails on it, is run again and
-- finds the first's.
--   kind        'd' for a dedupe key (a delivery id), 'i' for an
--               idempotency key: separate namespaces, so a delivery id can
--               never replay an API answer.
--   key         the caller's key.
--   created_at  when it was recorded, unix milliseconds of the store's
--               clock; Sweep deletes keys older than a week.
--   hash        an idempotency key's request digest ('' for dedupe).
--   answer      an idempotency key's stored answer ('' for dedupe).
CREATE TABLE request_keys (
    kind       text NOT NULL CHECK (kind IN ('d', 'i')),
    key        text COLLATE "C" NOT NULL,
    created_at bigint NOT NULL,
    hash       text NOT NULL DEFAULT '',
    answer     bytea NOT NULL DEFAULT '',
    PRIMARY KEY (kind, key)
);
-- Sweep finds the old keys without reading the others.
CREATE INDEX request_keys_created ON request_keys (created_at);

-- sink_positions holds each output sink's position in a session's log.
--   sink        the sink's name (a provider: "slack").
--   session_id  the session.
--   body        JSON of core.SinkPosition (seq and the sink's state).
CREATE TABLE sink_positions (
    sink       text COLLATE "C" NOT NULL,
    session_id text COLLATE "C" NOT NULL,
    body       bytea NOT NULL,
    PRIMARY KEY (sink, session_id)
);

-- sink_active marks the sessions a sink may be behind on: set in the
-- transaction that logs a turn.started (for the sink of the session's
-- origin provider), cleared by ReleaseSink once the sink rendered the
-- whole log. The primary key lists one sink's sessions in id order.
CREATE TABLE sink_active (
    sink       text COLLATE "C" NOT NULL,
    session_id text COLLATE "C" NOT NULL,
    PRIMARY KEY (sink, session_id)
);
