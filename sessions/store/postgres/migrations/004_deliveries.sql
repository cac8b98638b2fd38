-- Outbound webhooks: the destinations events are delivered to, and the
-- durable queue of deliveries. Append inserts a delivery of each event to
-- every destination whose filter it passes, in the transaction that logs
-- the event, so the log and the queue commit together.
--
-- Ids are text in the "C" collation: lists page in byte order, as the
-- bbolt store's, whatever the database's locale.
--
-- Locking: every write that touches a destination's streams locks the
-- destination's row first (an append, a successful attempt and a
-- redelivery FOR SHARE; a failed attempt, which may pause it, and a resume
-- FOR NO KEY UPDATE; a delete FOR UPDATE), then the stream's row, then its
-- deliveries. A destination's status therefore never changes under a
-- write that is scheduling one of its streams, and no delete runs under an
-- append that queues to it.

-- destinations: one row per webhook destination.
--   id            the destination's id ("dst_…"); the sealed secret's aad.
--   session_id    the session a session destination follows; NULL for a
--                 global destination, which follows every session.
--   agent_id      a global destination's agent filter ('' : every agent),
--                 for the agent filter of the list.
--   status        'active' or 'paused', as in body, so the locking reads
--                 need not decode it.
--   body          the destination as the API shows it (JSON, byte for byte).
--   sealed_secret the signing secret, sealed with id as aad; NULL: none.
-- No foreign key to the sessions table: the store checks the session when
-- it creates the destination (its row locked), and migrations stay
-- independent of each other's tables.
CREATE TABLE destinations (
    id            text COLLATE "C" PRIMARY KEY,
    session_id    text COLLATE "C",
    agent_id      text COLLATE "C" NOT NULL DEFAULT '',
    status        text NOT NULL,
    body          bytea NOT NULL,
    sealed_secret bytea
);
-- Append reads the global destinations (session_id IS NULL) and the
-- session's; the list pages through one scope in id order.
CREATE INDEX destinations_scope ON destinations (session_id, id);

-- deliveries: one row per event on its way to one destination, kept after
-- it is settled (delivered or dead) for the list and redelivery.
--   id             the delivery's id ("dlv_…"), in enqueue order: its
--                  middle bits come from delivery_ids.
--   destination_id the destination (its row may be deleted; the delivery
--                  then ended dead).
--   session_id     the session whose event it carries.
--   seq            the event's seq in the session's log.
--   state          'pending', 'delivered' or 'dead', as in body.
--   body           the delivery as the API shows it (JSON, with its
--                  attempts).
CREATE TABLE deliveries (
    id             text COLLATE "C" PRIMARY KEY,
    destination_id text COLLATE "C" NOT NULL,
    session_id     text COLLATE "C" NOT NULL,
    seq            bigint NOT NULL,
    state          text NOT NULL,
    body           bytea NOT NULL
);
-- The list of one destination's or one session's deliveries, in id order.
CREATE INDEX deliveries_destination ON deliveries (destination_id, id);
CREATE INDEX deliveries_session ON deliveries (session_id, id);
-- The queue: a stream's pending deliveries in seq order; its head is the
-- first. Settled deliveries leave the index, so a head is found without
-- passing over a stream's history.
CREATE INDEX deliveries_queue ON deliveries (destination_id, session_id, seq)
    WHERE state = 'pending';

-- delivery_ids numbers deliveries so their ids sort in enqueue order across
-- replicas (it orders ids only; a log's seq never comes from a sequence).
CREATE SEQUENCE delivery_ids;

-- delivery_streams: one row per stream (a destination's deliveries of one
-- session) that has pending deliveries; the row is deleted when the stream
-- empties. It is the row a worker locks to own the stream.
--   destination_id, session_id  the stream.
--   due_at         when the stream's head is next attempted, unix
--                  milliseconds; NULL while the destination is paused.
CREATE TABLE delivery_streams (
    destination_id text COLLATE "C" NOT NULL,
    session_id     text COLLATE "C" NOT NULL,
    due_at         bigint,
    PRIMARY KEY (destination_id, session_id)
);
-- The due deliveries, earliest first (ties in stream order); paused
-- streams stay out of it.
CREATE INDEX delivery_streams_due ON delivery_streams (due_at, destination_id, session_id)
    WHERE due_at IS NOT NULL;
