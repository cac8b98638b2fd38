// Package postgres is the PostgreSQL implementation of the session store:
// the same contract as the bbolt store (proven by the same conformance
// suite, sessions/store/storetest), which lets several gateway replicas share one
// database.
//
// The schema is created and changed by the migrations in migrations/,
// embedded in the binary and applied at Open under an advisory lock; each
// file documents the tables it creates. Migrations are additive, so two
// binary versions run side by side during a rolling deploy;
// switchboard_meta.min_schema names the oldest binary schema a database
// still accepts.
//
// Records keep the JSON the API shows (bytea, so bodies are stored byte for
// byte), beside the columns the store looks them up by. Every write is one
// transaction at READ COMMITTED that locks the rows it changes (a
// session's row orders its writes: seq is assigned under it, never from a
// sequence); no transaction stays open across a model or tool call. A
// write is two round trips: its BEGIN goes with the reads it locks the
// rows by, and its COMMIT with the writes nothing in it reads back.
//
// Load fills an empty database with the records of another store
// (sessions/store/dump) in one transaction, for store copy; load.go says what
// it refuses.
//
// # Commit stream across replicas
//
// A store publishes its own writes' changes after they commit, and the
// other replicas' from their notifications (notify.go, listen.go). Every
// write that reports changes has a notice per change sent once it has
// committed (notifier.go: one goroutine, whatever waits in one short
// transaction that does not wait for its flush), on the channel
// switchboard_commits_<schema> (a schema is one deployment; a name past 63
// bytes uses a digest of the schema), derived
// from current_schema() at Open. A store sends the notices of a session in
// the order its writes committed, and none for a write rolled back. The
// payload is JSON, far below the 8000 bytes the server allows, and never
// carries a body:
//
//	r    the writing store's id (random per Store): its own are skipped
//	s    the session's id
//	p    the session's origin provider, absent for an API session
//	e    [first, last]: the seqs the write appended, absent for none
//	q    one letter per queued input, in order: m user.message,
//	     i user.interrupt, c user.tool_confirmation,
//	     r user.custom_tool_result
//	qi   the queued inputs' ids, dropped when they do not fit
//	st   the status after the write, when the write changed it
//	lag  true when even the letters did not fit (thousands of inputs):
//	     the receivers tell their subscribers they lagged
//
// Each store listens on a connection of its own (not the pool's) and
// rebuilds a change from a notice: the events by seq from the log, the
// queued inputs as id and type (their bodies are in Pending), the
// provider and status from the notice. NOTIFY is only a hint: a
// connection that is not listening is sent nothing. When the listening
// connection breaks, the store listens again with back-off and then
// signals Lagged to every subscriber, which recovers from the store. A
// notice that cannot be read does the same. Order holds per session for
// the writes of one replica; a session written by two replicas in turn
// (a turn handed over) may reach a subscriber out of seq order, which
// the SSE followers order by seq. NOTIFY serializes the commits that use
// it on a lock of the database's notification queue, held until the
// commit's flush: sent inside the writes, it would make every write of
// every replica wait for the one before it to reach the disk. Sent after,
// the cost is one notifying transaction per batch, and a replica that dies
// between a commit and its notice leaves the others to catch up by seq.
package postgres
