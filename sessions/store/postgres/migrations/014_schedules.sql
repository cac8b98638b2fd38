-- Schedules (core.ScheduleStore): inputs sent at cron times or once.
--
-- schedules: one row per schedule.
--   id        the schedule's id (sch_…).
--   next_at   when it fires next, in Unix nanoseconds; NULL while paused
--             and once a one-off fired. The runner reads the due ones in
--             next_at order; FireSchedule locks the row, checks next_at
--             still equals the due time it fires for, and queues the
--             input in the same transaction, so a due time fires once
--             across replicas.
--   session   the session it targets ("" for a new session's agent).
--   made_by   "admin", or the session whose model made it (the schedule
--             tool). A session's schedules are those of either column.
--   body      the schedule's JSON (core.Schedule).
CREATE TABLE schedules (
    id       text PRIMARY KEY,
    next_at  bigint,
    session  text,
    made_by  text,
    body     bytea NOT NULL
);
CREATE INDEX schedules_due ON schedules (next_at, id) WHERE next_at IS NOT NULL;
CREATE INDEX schedules_session ON schedules (session, id);
CREATE INDEX schedules_made_by ON schedules (made_by, id);
