-- Cached tokens and estimated cost in the hourly counters of turns
-- (core.HourStats), summed from each turn.completed body like the others.
--   cache_read_tokens      the turns' usage.cache_read_input_tokens.
--   cache_creation_tokens  the turns' usage.cache_creation_input_tokens.
--   cost_usd               the turns' cost_usd, for the turns that had a
--                          price (an estimate from the gateway's price
--                          table, docs/cost.md).
-- Hours counted before this migration start at 0.
ALTER TABLE hourly_stats
    ADD COLUMN cache_read_tokens bigint NOT NULL DEFAULT 0,
    ADD COLUMN cache_creation_tokens bigint NOT NULL DEFAULT 0,
    ADD COLUMN cost_usd double precision NOT NULL DEFAULT 0;
