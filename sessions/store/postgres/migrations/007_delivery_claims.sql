-- Delivery streams claimed across replicas: a (destination, session)
-- stream is delivered by one replica at a time, so each delivery is
-- attempted by one of them and a stream's deliveries leave in order.
-- Additive: an older binary ignores the new columns (and does not respect
-- the claims while both run during a rolling deploy).
--
-- New columns of delivery_streams (the row exists while the stream has
-- pending deliveries, so nothing needs a backfill):
--   holder      the replica (runtime holder id) whose dispatcher holds
--               the stream; NULL when no one does
--   epoch       the claim's grant number, from delivery_claim_epochs (0:
--               never claimed). An attempt's result carries it and is
--               refused unless it equals this, checked under the stream's
--               row lock in the attempt's transaction
--   expires_at  the claim's expiry by the database's clock (now()), never
--               a replica's; NULL once released
--   claim_ms    the claim's ttl in milliseconds: what a renewal (an
--               attempt whose stream's next delivery is due at once) adds
--
-- A claim is taken by ClaimDeliveries: one statement that picks due rows
-- whose claim is absent or expired FOR UPDATE SKIP LOCKED, in due order,
-- and writes the claim. The attempt that lets its stream wait (a retry
-- later, a paused destination) releases it; the one that empties the stream
-- deletes the row.
ALTER TABLE delivery_streams
    ADD COLUMN holder     text,
    ADD COLUMN epoch      bigint NOT NULL DEFAULT 0,
    ADD COLUMN expires_at timestamptz,
    ADD COLUMN claim_ms   bigint;

-- Epochs come from a sequence, not the row: a stream's row is deleted when
-- it empties and made again by its next delivery, and its epochs must
-- still grow past every earlier claim's.
CREATE SEQUENCE delivery_claim_epochs;

-- The claims held now, for the wait until the first of another replica's
-- runs out.
CREATE INDEX delivery_streams_claims ON delivery_streams (expires_at)
    WHERE holder IS NOT NULL;
