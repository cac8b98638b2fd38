// Package bolt is the session store in one bbolt file, the default
// backend: switchboard's one bbolt database and everything stored in it:
// agents and their versions, sessions, their event logs and queued inputs,
// dedupe and idempotency keys, the wake queue and turn leases, the vaults
// of credentials (sealed), and webhook destinations with their queue of
// deliveries, platform installations and their sealed tokens, single-use
// keys, the positions of the providers' output sinks, and skills with
// every version's files, and memory stores with the versions of their
// files, and the console's sign-ins and failed sign-ins, and the hourly
// counters of turns. Store implements core.Store, core.VaultStore,
// core.DestinationStore, core.DeliveryQueue, core.SkillStore,
// core.MemoryStores, core.ConsoleStore and core.StatsStore.
//
// Open with Options.ReadOnly reads a file under a shared lock, refused
// while a process writes it; Dump then puts every record, as stored, for
// store copy (sessions/store/dump, sessions/store/storecopy).
//
// Every write is an fsync'd bbolt transaction that has committed before the
// method returns (NoSync is never set). The writes that change sessions
// (CreateSession, QueueInputs, Append, Archive) report what they changed,
// and once their commit is durable the store publishes it on its commit
// stream (core.CommitStream, Subscribe) in commit order. The hot writes (CreateSession,
// QueueInputs, Append) go through a group committer (commit.go): a write
// that finds no commit in flight commits at once, and writes arriving while
// it syncs share the next commit and its fsync. When one write of a group
// fails, the others are run again alone, so transaction functions may run
// more than once and derive everything from the transaction's state.
//
// # Bucket layout
//
// "‖" is concatenation. Ids and names are their UTF-8 bytes, without a
// terminator. JSON is encoding/json with HTML escaping off; event bodies
// are stored compacted, {} when empty. Times inside JSON are core.Time
// (RFC 3339 UTC, millisecond precision). Top-level buckets:
//
//	meta            "schema_version" → 4-byte big-endian uint32, currently 2
//	                (Open marks a file of schema 1 as 2: what 2 changed,
//	                log_tails and queue, a binary of schema 1 would not
//	                read)
//
//	agents          agent id → JSON of core.Agent (the latest version)
//	agent_versions  agent id ‖ 4-byte big-endian uint32 version → JSON of
//	                core.Agent (every version, immutable)
//	agent_names     agent name → agent id (names are unique)
//
//	sessions        session id → JSON of core.Session (the record; status,
//	                stop reason, usage, last seq, turn id and pending action
//	                are the projection of its log)
//	session_keys    external (origin) key, or a link's key → session id
//	logs            one nested bucket per session whose log has more than
//	                a tail, named by session id: 8-byte big-endian uint64
//	                seq (1, 2, … gap-free) → JSON of core.Event as logged
//	log_tails       session id ‖ 0x00 ‖ 8-byte big-endian uint64 seq → the
//	                same: a session's newest events, fewer than 32 and
//	                each at most 2 KiB, every one after those in its logs
//	                bucket. The append that would make a tail 32 long, or
//	                logs a larger event, moves the tail into logs with its
//	                own events after it (logtail.go: why)
//	queue           session id ‖ 0x00 ‖ 8-byte big-endian uint64 queue
//	                position (the bucket's NextSequence, so queue order) →
//	                JSON of core.Event with seq 0: the inputs waiting for
//	                a turn; a session's are deleted on archive. Schema 1
//	                kept them in pending, one nested bucket per session
//	                keyed by position; Open moves those here, each queue
//	                in its order, and deletes pending (queued.go: why)
//	status_counts   status (e.g. "idle") → 8-byte big-endian uint64 number
//	                of sessions in it; absent means zero
//	sessions_by_provider
//	                provider (core.Session.Provider: "api" without an
//	                origin) ‖ 0x00 ‖ session id → empty value
//	sessions_by_tenant
//	                tenant ‖ 0x00 ‖ session id → empty value (sessions
//	                without a tenant are left out)
//	session_texts   session id → the text of its first user message not
//	                written by the system, at most its first 500 bytes
//	                (record.FirstText); absent until one is queued, then
//	                never changed
//
// The last three are written with the session record and its first
// inputs, in their transaction, and serve ListSessions' provider, tenant
// and text filters; meta's "session_filters_built" marks a file where
// they cover every session: Open builds them once for a file of an
// earlier release, from its sessions, logs and queues.
//
//	wakes           8-byte big-endian uint64 due time in unix nanoseconds
//	                (instants before 1970 as 0) ‖ session id → empty value
//	wake_index      session id → that session's key in wakes (one wake per
//	                session; the earlier request wins)
//	leases          session id → holder (the runtime that appended the
//	                turn.started of the open turn); deleted by turn.completed
//	                and by archive
//	run_leases      session id → JSON {"holder": the runtime running the
//	                session's turns, omitted once released; "epoch": the
//	                grant counter, which only grows; "expires_ms": the
//	                lease's expiry by the store's clock in unix
//	                milliseconds; "last": the holder of the latest grant}
//	replicas        holder → JSON {"expires_ms": its heartbeat's expiry,
//	                "draining": true while it stops}
//
//	keys            kind byte ‖ caller's key → 8-byte big-endian uint64
//	                created time in unix nanoseconds ‖ 4-byte big-endian
//	                uint32 hash length n ‖ n bytes of hash ‖ answer (the rest)
//	                kind is 'd' (0x64) for a dedupe key, whose hash and
//	                answer are empty, or 'i' (0x69) for an idempotency key
//	key_times       8-byte big-endian uint64 created time in unix
//	                nanoseconds ‖ the keys key → empty value (Sweep walks it
//	                in time order)
//
//	vaults              vault id → JSON of core.Vault
//	credentials         credential id → JSON of core.Credential (metadata
//	                    only: no secret value is ever in it), its scope
//	                    included; meta's "credential_scopes" marks a file
//	                    where every record has one: Open writes global
//	                    into those of an earlier release, once
//	credential_secrets  credential id → the sealed core.CredentialSecret:
//	                    the core.Sealer's output over its JSON, with the
//	                    credential id as aad (oauth.Sealer: 1 version byte
//	                    0x01 ‖ 12-byte nonce ‖ AES-256-GCM ciphertext and
//	                    tag); the store never sees the plaintext
//	vault_credentials   vault id ‖ credential id → empty value (both ids
//	                    are 30 bytes, "vlt_" or "vcr_" + 26 base32 digits,
//	                    so the key splits after byte 30 and a prefix scan
//	                    on a vault id lists its credentials in id order)
//
// A credential's three entries are written and deleted in one transaction;
// DeleteVault deletes the vault's credentials with it.
//
//	destinations         destination id → JSON of core.Destination
//	destination_secrets  destination id → the sealed Standard Webhooks
//	                     secret: the core.Sealer's output over its text
//	                     ("whsec_…"), with the destination id as aad
//	destination_filters  scope ‖ destination id → JSON of what Append
//	                     checks, {"level","types","agent_id","paused"}
//	                     (core.EventFilter; paused only when true); scope
//	                     is 'g' (0x67) for a global destination or
//	                     's' (0x73) ‖ session id for a session's, and
//	                     destination ids are 30 bytes ("dst_" + 26 base32
//	                     digits), so a key splits 30 bytes from its end
//
// The delivery queue's first three buckets keep the names "outbox…" that
// data directories of earlier releases have:
//
//	outbox               destination id ‖ session id ‖ 8-byte big-endian
//	                     uint64 seq → delivery id: the pending deliveries.
//	                     A destination's deliveries of one session are a
//	                     stream, delivered in seq order; its first key is
//	                     the only one attempted
//	outbox_due           8-byte big-endian uint64 due time in unix
//	                     nanoseconds ‖ destination id ‖ session id → empty
//	                     value: one entry per scheduled stream, at its
//	                     first delivery's next attempt; the streams of a
//	                     paused destination are left out until it resumes
//	outbox_streams       destination id ‖ session id → that stream's key
//	                     in outbox_due
//	delivery_claims      destination id ‖ session id → JSON of the
//	                     stream's claim {"holder": the dispatcher holding
//	                     it, omitted once released; "boot": the Open that
//	                     granted it (a claim of an earlier Open is void);
//	                     "epoch": from the bucket's NextSequence, so it
//	                     grows across a stream's records; "expires_ms":
//	                     expiry by the store's clock in unix milliseconds;
//	                     "ttl_ms": what a renewal adds}. Deleted with the
//	                     stream's last pending delivery and with its
//	                     destination
//	deliveries           delivery id → JSON of core.Delivery in any state,
//	                     with its last 20 attempts. The id is "dlv_" + 26
//	                     base32 digits (30 bytes) over 48-bit millisecond
//	                     time ‖ the bucket's NextSequence as 64 bits ‖ 16
//	                     random bits (core.NewSeqID), so deliveries list
//	                     in the order Append made them
//	deliveries_by_destination
//	                     destination id ‖ delivery id → empty value
//	deliveries_by_session
//	                     session id ‖ delivery id → empty value
//
// Append writes the deliveries of the events it logs (one per event and
// destination whose filter it passes) in the transaction that logs them,
// so a crash neither loses nor invents a delivery, and a destination sees
// exactly the events committed after its own creation. Deleting a
// destination deletes its queue and marks its pending deliveries dead;
// delivery records stay.
//
// CountByStatus, the wake queue and OpenTurns read only status_counts,
// wakes and leases, never the sessions, so start-up and metrics cost the
// same with a hundred thousand idle sessions as with none.
//
// Sandbox environments (Store also implements core.EnvironmentStore):
//
//	environments       environment id ("env_" + 26 base32 digits) → JSON
//	                   of core.Environment (no secret: its credentials
//	                   are vault credential ids)
//	environment_names  environment name → environment id (names are
//	                   unique and may not look like ids)
//
// An environment's record and its name entry are written and deleted in
// one transaction. Deleting an environment leaves the sessions and agents
// that name it as they are.
//
// Platform installations, single-use keys and output sinks (Store also
// implements core.InstallationStore, core.OnceStore and core.SinkStore):
//
//	installations        installation id → JSON of core.Installation (no
//	                     token is ever in it; has_token and
//	                     token_expires_at describe the sealed tokens)
//	installation_keys    provider ‖ 0x00 ‖ external id (e.g.
//	                     "slack" ‖ 0x00 ‖ "T0123") → installation id: one
//	                     installation per provider and tenant
//	installation_tokens  installation id → the sealed tokens: the
//	                     core.Sealer's output over the provider's token
//	                     JSON (oauth.TokenSet), with
//	                     core.InstallationAAD(provider, external id),
//	                     "installation:<provider>:<external id>", as aad
//	once                 key (e.g. "oauth:state:<nonce>") → 8-byte
//	                     big-endian uint64 expiry in unix nanoseconds
//	once_times           8-byte big-endian uint64 expiry in unix
//	                     nanoseconds ‖ the once key → empty value; Once
//	                     deletes the expired keys it walks to first
//	sink_positions       sink name ‖ 0x00 ‖ session id → JSON of
//	                     core.SinkPosition: {"seq": the last event the
//	                     provider's output sink rendered, "state": the
//	                     sink's own JSON (omitted when empty)}
//	sink_active          sink name ‖ 0x00 ‖ session id → empty value: the
//	                     sessions a sink may be behind on, resumed at
//	                     start. Append marks a session for the sink named
//	                     by its origin provider in the transaction that
//	                     logs a turn.started; ReleaseSink unmarks it once
//	                     the sink has rendered the whole log
//	sink_claims          sink name ‖ 0x00 ‖ session id → JSON {"holder":
//	                     the holder rendering the sink's output of the
//	                     session, omitted once released; "boot": the Open
//	                     that granted it (a claim of an earlier Open is
//	                     void: its process is gone); "epoch": the grant
//	                     counter, which only grows, and which
//	                     SaveSinkPosition checks in its transaction;
//	                     "expires_ms": the claim's expiry by the store's
//	                     clock in unix milliseconds}
//
// An installation's three entries are written and deleted in one
// transaction. Sink names and providers never contain 0x00.
//
// Skills (Store also implements core.SkillStore):
//
//	skills          skill id ("skl_" + 26 base32 digits, 30 bytes) → JSON
//	                of core.Skill (the latest version)
//	skill_names     skill name → skill id (names are unique; they are
//	                lowercase letters, digits and hyphens, never an id)
//	skill_versions  skill id ‖ 4-byte big-endian uint32 version → JSON of
//	                core.Skill (every version, immutable; the file list
//	                gives each file's path, size, mode and sha256)
//	skill_contents  skill id ‖ the 32-byte sha256 of a file's content →
//	                the content: the files of all of a skill's versions,
//	                each distinct content once
//
// A version's records and any content it adds are written in one
// transaction, with the name entry when the name changes. DeleteSkill
// deletes the skill's entries in all four (a prefix scan on the id finds
// its versions and contents), in the transaction that checks no agent's
// latest version (agents) and no session that is not archived (through
// agent_versions) pins it. An agent version's skills are resolved to
// skill ids and versions in the transaction that saves it.
// Memory stores and the versions of their files (Store also implements
// core.MemoryStores):
//
//	memory_stores       memory store id ("mem_" + 26 base32 digits, 30
//	                    bytes) → JSON of core.MemoryStore
//	memory_store_names  memory store name → memory store id (names are
//	                    unique and may not look like ids)
//	memory_versions     memory store id ‖ partition ‖ 0x00 ‖ path ‖ 0x00 ‖
//	                    4-byte big-endian uint32 version → 8-byte
//	                    big-endian uint64 seq ‖ JSON of core.MemoryVersion
//	                    without its content. The partition is a tenant or
//	                    "*" (core.SharedPartition); partitions and paths
//	                    never contain 0x00, so a prefix scan on store id ‖
//	                    partition ‖ 0x00 lists a partition's versions by
//	                    path, then version, and one on that ‖ path ‖ 0x00
//	                    a file's. seq is the bucket's NextSequence when the
//	                    version was written: it orders a partition's
//	                    versions for pruning, oldest first
//	memory_contents     the memory_versions key of a version that is not
//	                    a deletion → its content (UTF-8 text)
//	memory_embeddings   memory store id ‖ partition ‖ 0x00 ‖ path ‖ 0x00
//	                    → a file's embedding (record.MemoryEmbeddingBody):
//	                    4-byte big-endian length n ‖ n bytes of JSON {path,
//	                    version, model, dims, spans: [[start, end], …]} ‖
//	                    each chunk's vector, dims little-endian float32s.
//	                    Derived data: one per file, of one version, re-made
//	                    by the memory tool when stale; a file's deletion
//	                    deletes it
//
// A change to a partition (ChangeMemory) writes its versions and prunes
// the versions its limits drop in one transaction. A file's latest
// version is never pruned, so version numbers, the latest's plus one,
// are never reused. DeleteMemoryStore deletes the store's entries of all
// five buckets in one transaction.
//
// The console's sign-ins and failed sign-ins (Store also implements
// core.ConsoleStore). Their times are unix nanoseconds of instants kept
// to the millisecond (record.ConsoleTime):
//
//	console_sessions       sign-in id (the hex SHA-256 of the cookie's
//	                       secret) → JSON of core.ConsoleSession
//	console_session_times  8-byte big-endian uint64 expiry ‖ sign-in id →
//	                       empty value (SweepConsole walks it in time
//	                       order)
//	console_failures       client address ‖ 0x00 ‖ 8-byte big-endian
//	                       uint64 time ‖ 8-byte big-endian uint64 seq (the
//	                       bucket's NextSequence, so two failures of one
//	                       instant are two keys) → empty value: a prefix
//	                       scan on address ‖ 0x00 counts an address's
//	                       failures in a window. Addresses never contain
//	                       0x00
//	console_failure_times  8-byte time ‖ 8-byte seq ‖ client address →
//	                       empty value (SweepConsole walks it in time
//	                       order)
//
// A sign-in's two entries, and a failure's, are written and deleted in one
// transaction. Sweep sweeps these as SweepConsole does. Dump leaves them
// out: a copied store starts with no console sign-in.
//
// Hourly counters of turns (Store also implements core.StatsStore):
//
//	hourly_stats  8-byte big-endian uint64 start of the hour (UTC) in unix
//	              nanoseconds → JSON of core.HourStats
//
// Append adds each turn.completed it logs to the counters of the hour of
// the event's created_at, in the transaction that logs it, so the
// counters hold exactly the turns committed. Turns logged by a release
// without the bucket are not counted.
//
// Schedules (Store also implements core.ScheduleStore):
//
//	schedules     schedule id → JSON of core.Schedule
//	schedule_due  8-byte big-endian uint64 next_at in unix nanoseconds +
//	              schedule id → empty value: the schedules that will
//	              fire, in due order (a paused or finished one has none)
//
// FireSchedule checks, in one transaction, that the due time it fires for
// is still the schedule's next_at, queues the input (or creates the new
// session) with the dedupe key schedule:<id>:<due>, and moves next_at on.
//
// Attachments (core.AttachmentStore):
//
//	attachments   attachment id → the file's bytes
//
// A user.message refers to them by id in its attachments.
//
// Attach tokens (Store also implements core.AttachTokenStore):
//
//	attach_tokens          token id → JSON of core.AttachToken (the
//	                       sha256 of the secret, never the secret)
//	attach_tokens_by_sess  session id + token id → empty value: a
//	                       session's tokens, oldest first
//
// Creating or revoking a token logs session.attach_token_created or
// session.attach_token_revoked in the same transaction.
package bolt
