-- Hourly counters of turns (core.StatsStore).
--
-- hourly_stats: one row per hour (UTC) in which a turn completed. Append
-- upserts the hour's row (INSERT … ON CONFLICT DO UPDATE, adding to the
-- counters) in the transaction that logs the turn.completed, so the
-- counters hold exactly the turns committed; an overview reads a day as 24
-- rows, never the logs. The row is shared by every session's turns of the
-- hour, so Append writes it last, holding its lock the least.
--   hour           the hour's start, by the turn.completed event's time.
--   turns          turns completed in the hour.
--   failed         those of them whose reason is "error".
--   input_tokens,  the turns' usage summed (the turn.completed body's).
--   output_tokens
-- The primary key serves HourlyStats (a range of hours, oldest first).
CREATE TABLE hourly_stats (
    hour          timestamptz PRIMARY KEY,
    turns         bigint NOT NULL,
    failed        bigint NOT NULL,
    input_tokens  bigint NOT NULL,
    output_tokens bigint NOT NULL
);
