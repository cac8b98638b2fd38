// Package postgres is the PostgreSQL implementation of the session store:
// the same contract as the bbolt store (proven by the same conformance
// suite, sessions/storetest), which lets several gateway replicas share one
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
// sequence); no transaction stays open across a model or tool call.
package postgres
