package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/dump"
	"github.com/switchboardhq/switchboard/sessions/store/record"
)

// unloaded are the tables Load neither fills nor requires empty: facts
// about the database, the leases and heartbeats of running processes, and
// the console's sign-ins and failed sign-ins, ephemeral, which a copied
// store does not carry.
var unloaded = map[string]bool{
	"switchboard_meta": true, versionTable: true, "session_leases": true, "replicas": true, "sink_claims": true,
	"console_sessions": true, "console_sign_in_failures": true,
}

// loadBatch bounds the statements sent to the server at once, and
// loadBatchBytes the file contents among them.
const (
	loadBatch      = 500
	loadBatchBytes = 16 << 20
)

// Load fills an empty database with a dump, in one transaction: fill puts
// the records. It records keyCheck as the master key's check value, or
// refuses another one (ErrMasterKeyMismatch), since the dump's sealed
// values are copied as they are. A database holding any record is refused
// (core.ErrConflict) and nothing is written; the tables stay locked
// against writers until the load ends.
func (s *Store) Load(ctx context.Context, keyCheck string, fill func(dump.Put) error) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if err := lockEmpty(ctx, tx); err != nil {
			return err
		}
		if err := checkMasterKeyTx(ctx, tx, keyCheck); err != nil {
			return err
		}
		l := &loader{ctx: ctx, tx: tx, batch: &pgx.Batch{}, counts: map[countKey]int64{}}
		if err := fill(l.put); err != nil {
			return err
		}
		for k, n := range l.counts {
			l.batch.Queue(`INSERT INTO session_counts (status, shard, n) VALUES ($1, $2, $3)`, string(k.status), k.shard, n)
		}
		return l.flush()
	})
	if err != nil {
		return fmt.Errorf("load: %w", err)
	}
	return nil
}

// lockEmpty locks every table Load fills against writers (readers go on)
// and checks that none has a row.
func lockEmpty(ctx context.Context, tx pgx.Tx) error {
	rows, err := tx.Query(ctx, `SELECT table_name FROM information_schema.tables
		WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name`)
	if err != nil {
		return fmt.Errorf("list tables: %w", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("list tables: %w", err)
	}
	var tables, probes []string
	for _, n := range names {
		if unloaded[n] {
			continue
		}
		t := pgx.Identifier{n}.Sanitize()
		tables = append(tables, t)
		probes = append(probes, fmt.Sprintf("SELECT %s FROM %s HAVING count(*) > 0", quote(n), t))
	}
	if len(tables) == 0 {
		return errors.New("no tables: the schema was not migrated")
	}
	if _, err := tx.Exec(ctx, "LOCK TABLE "+strings.Join(tables, ", ")+" IN EXCLUSIVE MODE"); err != nil {
		return fmt.Errorf("lock tables: %w", err)
	}
	rows, err = tx.Query(ctx, strings.Join(probes, " UNION ALL "))
	if err != nil {
		return fmt.Errorf("check the tables are empty: %w", err)
	}
	full, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("check the tables are empty: %w", err)
	}
	if len(full) > 0 {
		return fmt.Errorf("the database is not empty (rows in %s): %w", strings.Join(full, ", "), core.ErrConflict)
	}
	return nil
}

// quote is a string literal of a table name (names come from the catalog).
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

type countKey struct {
	status core.Status
	shard  int16
}

// loader queues the inserts of one Load.
type loader struct {
	ctx    context.Context
	tx     pgx.Tx
	batch  *pgx.Batch
	counts map[countKey]int64
	// contentBytes are the skill file contents in batch.
	contentBytes int
}

func (l *loader) flush() error {
	if l.batch.Len() == 0 {
		return nil
	}
	err := l.tx.SendBatch(l.ctx, l.batch).Close()
	l.batch, l.contentBytes = &pgx.Batch{}, 0
	return err
}

func (l *loader) put(r dump.Record) error {
	q := l.batch.Queue
	switch r := r.(type) {
	case dump.Agent:
		q(`INSERT INTO agents (id, name, version, body) VALUES ($1, $2, $3, $4)`, r.ID, r.Name, r.Version, []byte(r.Body))
	case dump.AgentVersion:
		q(`INSERT INTO agent_versions (agent_id, version, body) VALUES ($1, $2, $3)`, r.AgentID, r.Version, []byte(r.Body))
	case dump.Session:
		var key *string
		if r.ExternalKey != "" {
			key = &r.ExternalKey
		}
		var tenant *string
		if r.Tenant != "" {
			tenant = &r.Tenant
		}
		first := r.FirstText
		if first != nil {
			// A bbolt file of an earlier release kept U+0000 in it.
			text := record.SearchText(*first)
			first = &text
		}
		q(`INSERT INTO sessions (id, status, agent_id, external_key, last_seq, lease_holder, body, provider, tenant, first_text)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`, r.ID, string(r.Status), r.AgentID, key, int64(r.LastSeq), r.TurnHolder, []byte(r.Body),
			r.Provider, tenant, first)
		l.counts[countKey{r.Status, countShard(r.ID)}]++
		for _, key := range r.Links {
			q(`INSERT INTO session_links (key, session_id) VALUES ($1, $2)`, key, r.ID)
		}
	case dump.Event:
		q(`INSERT INTO events (session_id, seq, body) VALUES ($1, $2, $3)`, r.SessionID, int64(r.Seq), []byte(r.Body))
	case dump.Input:
		q(`INSERT INTO pending_inputs (session_id, pos, type, body) VALUES ($1, $2, $3, $4)`, r.SessionID, int64(r.Pos), r.Type, []byte(r.Body))
	case dump.RequestKey:
		kind := kindDedupe
		if r.Idempotency {
			kind = kindIdempotency
		}
		q(`INSERT INTO request_keys (kind, key, created_at, hash, answer) VALUES ($1, $2, $3, $4, $5)`,
			kind, r.Key, r.Created.UnixMilli(), r.Hash, nonNil(r.Answer))
	case dump.Wake:
		q(`INSERT INTO wakes (session_id, due_at) VALUES ($1, $2)`, r.SessionID, r.Due.UnixNano())
	case dump.SinkPosition:
		q(`INSERT INTO sink_positions (sink, session_id, body) VALUES ($1, $2, $3)`, r.Sink, r.SessionID, []byte(r.Body))
	case dump.SinkMark:
		q(`INSERT INTO sink_active (sink, session_id) VALUES ($1, $2)`, r.Sink, r.SessionID)
	case dump.Vault:
		q(`INSERT INTO vaults (id, body) VALUES ($1, $2)`, r.ID, []byte(r.Body))
	case dump.Credential:
		q(`INSERT INTO credentials (id, vault_id, body) VALUES ($1, $2, $3)`, r.ID, r.VaultID, []byte(r.Body))
		if r.Sealed != nil {
			q(`INSERT INTO credential_secrets (credential_id, sealed) VALUES ($1, $2)`, r.ID, r.Sealed)
		}
	case dump.Environment:
		q(`INSERT INTO environments (id, name, body) VALUES ($1, $2, $3)`, r.ID, r.Name, []byte(r.Body))
	case dump.Installation:
		q(`INSERT INTO installations (id, provider, external_id, body) VALUES ($1, $2, $3, $4)`, r.ID, r.Provider, r.ExternalID, []byte(r.Body))
		if r.SealedTokens != nil {
			q(`INSERT INTO installation_tokens (installation_id, sealed) VALUES ($1, $2)`, r.ID, r.SealedTokens)
		}
	case dump.Once:
		q(`INSERT INTO once_keys (key, until) VALUES ($1, $2)`, r.Key, r.Until)
	case dump.Destination:
		var sessionID *string
		if r.SessionID != "" {
			sessionID = &r.SessionID
		}
		q(`INSERT INTO destinations (id, session_id, agent_id, status, body, sealed_secret) VALUES ($1, $2, $3, $4, $5, $6)`,
			r.ID, sessionID, r.AgentID, string(r.Status), []byte(r.Body), r.SealedSecret)
	case dump.Delivery:
		q(`INSERT INTO deliveries (id, destination_id, session_id, seq, state, body) VALUES ($1, $2, $3, $4, $5, $6)`,
			r.ID, r.DestinationID, r.SessionID, int64(r.Seq), string(r.State), []byte(r.Body))
	case dump.DeliveryStream:
		var due *int64
		if r.Due != nil {
			ms := r.Due.UnixMilli()
			due = &ms
		}
		q(`INSERT INTO delivery_streams (destination_id, session_id, due_at) VALUES ($1, $2, $3)`, r.DestinationID, r.SessionID, due)
	case dump.Skill:
		q(`INSERT INTO skills (id, name, version, body) VALUES ($1, $2, $3, $4)`, r.ID, r.Name, r.Version, []byte(r.Body))
	case dump.SkillVersion:
		q(`INSERT INTO skill_versions (skill_id, version, body) VALUES ($1, $2, $3)`, r.SkillID, r.Version, []byte(r.Body))
	case dump.SkillContent:
		q(`INSERT INTO skill_contents (skill_id, sha256, content) VALUES ($1, $2, $3)`, r.SkillID, r.SHA256, nonNil(r.Content))
		l.contentBytes += len(r.Content)
	case dump.Attachment:
		q(`INSERT INTO attachments (id, data) VALUES ($1, $2)`, r.ID, nonNil(r.Data))
		l.contentBytes += len(r.Data)
	case dump.AttachToken:
		q(`INSERT INTO attach_tokens (id, session_id, body) VALUES ($1, $2, $3)`, r.ID, r.SessionID, []byte(r.Body))
	case dump.MemoryStore:
		q(`INSERT INTO memory_stores (id, name, body) VALUES ($1, $2, $3)`, r.ID, r.Name, []byte(r.Body))
	case dump.MemoryVersion:
		// A partition's row comes with its first version; its last_seq
		// is its versions' greatest.
		q(`INSERT INTO memory_partitions (store_id, partition, last_seq) VALUES ($1, $2, $3)
			ON CONFLICT (store_id, partition) DO UPDATE SET last_seq = greatest(memory_partitions.last_seq, excluded.last_seq)`,
			r.StoreID, r.Partition, r.Seq)
		var content []byte
		if !r.Deleted {
			content = nonNil(r.Content)
		}
		q(`INSERT INTO memory_versions (store_id, partition, path, version, seq, deleted, size, body, content)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`, r.StoreID, r.Partition, r.Path, r.Version, r.Seq, r.Deleted, r.Size, []byte(r.Body), content)
	case dump.HourStats:
		q(`INSERT INTO hourly_stats (hour, turns, failed, input_tokens, output_tokens, cache_read_tokens, cache_creation_tokens, cost_usd)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
			r.Hour, r.Turns, r.Failed, r.InputTokens, r.OutputTokens, r.CacheReadInputTokens, r.CacheCreationInputTokens, r.CostUSD)
	case dump.Schedule:
		var next *int64
		if r.NextAt != nil {
			n := r.NextAt.UnixNano()
			next = &n
		}
		q(`INSERT INTO schedules (id, next_at, session, made_by, body) VALUES ($1, $2, $3, $4, $5)`, r.ID, next, r.SessionID, r.CreatedBy, []byte(r.Body))
	default:
		return fmt.Errorf("load: unknown record %T", r)
	}
	if l.batch.Len() >= loadBatch || l.contentBytes >= loadBatchBytes {
		return l.flush()
	}
	return nil
}

// nonNil is b, or empty for nil (the column is NOT NULL).
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
