package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/dump"
	"github.com/switchboardhq/switchboard/sessions/store/record"
	"go.etcd.io/bbolt"
)

// dumped are the buckets Dump reads its records from, and undumped the
// ones it leaves out, and why. A test holds every bucket to one list or
// the other, so a bucket added to the store is added to Dump too.
var dumped = []string{
	bucketAgents, bucketAgentVersions, bucketSessions, bucketSessionKeys, bucketLogs, bucketLogTails, bucketQueue,
	bucketLeases, bucketKeys, bucketWakes, bucketSinkPositions, bucketSinkActive,
	bucketVaults, bucketCredentials, bucketCredentialSecrets, bucketEnvironments,
	bucketInstallations, bucketInstallationTokens, bucketOnce,
	bucketDestinations, bucketDestinationSecrets, bucketDeliveries, bucketOutbox, bucketOutboxStreams,
	bucketSkills, bucketSkillVersions, bucketSkillContents,
	bucketMemoryStores, bucketMemoryVersions, bucketMemoryContents,
	bucketHourlyStats, bucketSchedules, bucketAttachments, bucketAttachTokens,
}

var undumped = map[string]string{
	bucketMeta:               "the file's own schema version",
	bucketAgentNames:         "index: rebuilt from the agents",
	bucketStatusCounts:       "derived: recounted from the sessions",
	bucketWakeIndex:          "index: rebuilt from the wakes",
	bucketKeyTimes:           "index: rebuilt from the keys",
	bucketVaultCredentials:   "index: rebuilt from the credentials",
	bucketDestinationFilters: "derived: rebuilt from the destinations",
	bucketOutboxDue:          "index: the due times are read through outbox_streams",
	bucketDeliveriesByDest:   "index: rebuilt from the deliveries",
	bucketDeliveriesBySess:   "index: rebuilt from the deliveries",
	bucketEnvironmentNames:   "index: rebuilt from the environments",
	bucketMemoryStoreNames:   "index: rebuilt from the memory stores",
	bucketMemoryEmbeddings:   "derived: re-made from the memory files by the embedding model",
	bucketInstallationKeys:   "index: rebuilt from the installations",
	bucketOnceTimes:          "index: rebuilt from the once keys",
	bucketRunLeases:          "running processes' leases: void in another store",
	bucketReplicas:           "running processes' heartbeats: void in another store",
	bucketSinkClaims:         "running processes' claims on output: void in another store",
	bucketDeliveryClaims:     "running processes' claims on delivery streams: void in another store",
	bucketSkillNames:         "index: rebuilt from the skills",
	// Console sign-ins end when their browser's cookie does; a copied
	// store starts with none, as after a sign-out of every browser.
	bucketConsoleSessions:       "console sign-ins: ephemeral, not copied",
	bucketConsoleSessionTimes:   "console sign-ins: ephemeral, not copied",
	bucketConsoleFailures:       "failed console sign-ins: ephemeral, not copied",
	bucketConsoleFailureTimes:   "failed console sign-ins: ephemeral, not copied",
	bucketSessionsByProvider:    "index: rebuilt from the sessions",
	bucketSessionsByTenant:      "index: rebuilt from the sessions",
	bucketSessionTexts:          "put with its session (dump.Session's FirstText)",
	bucketScheduleDue:           "index: rebuilt from the schedules",
	bucketAttachTokensBySession: "index: rebuilt from the attach tokens",
}

// Dump puts every record of the store, in one read transaction (a
// consistent snapshot), in the order dump.Put describes. The records'
// JSON is the stored bytes; sealed values stay sealed.
func (s *Store) Dump(ctx context.Context, put dump.Put) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	err := s.db.View(func(tx *bbolt.Tx) error {
		d := dumper{tx: tx, put: put, ctx: ctx}
		for _, step := range []func() error{
			d.agents, d.sessions, d.keys, d.wakes, d.sinks,
			d.vaults, d.environments, d.installations, d.once, d.destinations, d.skills, d.memory, d.stats, d.schedules, d.attachments, d.attachTokens,
		} {
			if err := step(); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("dump: %w", err)
	}
	return nil
}

// dumper walks one read transaction. bbolt's values live as long as the
// transaction, which outlives every put.
type dumper struct {
	ctx context.Context
	tx  *bbolt.Tx
	put dump.Put
}

// each calls fn for every entry of a top-level bucket; a bucket an older
// file lacks has none.
func (d dumper) each(bucket string, fn func(k, v []byte) error) error {
	b := bkt(d.tx, bucket)
	if b == nil {
		return nil
	}
	return b.ForEach(func(k, v []byte) error {
		if err := d.ctx.Err(); err != nil {
			return err
		}
		if err := fn(k, v); err != nil {
			return fmt.Errorf("%s %q: %w", bucket, k, err)
		}
		return nil
	})
}

// get returns the value of k in a top-level bucket; a bucket an older
// file lacks has none.
func (d dumper) get(bucket string, k []byte) []byte {
	if b := bkt(d.tx, bucket); b != nil {
		return b.Get(k)
	}
	return nil
}

// decode reads a record's JSON into the fields the target files it by.
func decode[T any](v []byte) (*T, error) {
	var out T
	if err := json.Unmarshal(v, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

func (d dumper) agents() error {
	err := d.each(bucketAgents, func(_, v []byte) error {
		a, err := decode[core.Agent](v)
		if err != nil {
			return err
		}
		return d.put(dump.Agent{ID: a.ID, Name: a.Name, Version: a.Version, Body: v})
	})
	if err != nil {
		return err
	}
	return d.each(bucketAgentVersions, func(k, v []byte) error {
		id, version, err := splitVersionKey(k)
		if err != nil {
			return err
		}
		return d.put(dump.AgentVersion{AgentID: id, Version: version, Body: v})
	})
}

// splitVersionKey splits the key of a version record: a record's id ‖
// 4-byte big-endian version.
func splitVersionKey(k []byte) (string, int, error) {
	if len(k) < 4 {
		return "", 0, fmt.Errorf("key of %d bytes", len(k))
	}
	return string(k[:len(k)-4]), int(binary.BigEndian.Uint32(k[len(k)-4:])), nil
}

// sessions puts each session followed by its log and queued inputs.
func (d dumper) sessions() error {
	// The index holds each session's origin key and its links.
	keys := map[string][]string{}
	if err := d.each(bucketSessionKeys, func(k, v []byte) error {
		keys[string(v)] = append(keys[string(v)], string(k))
		return nil
	}); err != nil {
		return err
	}
	return d.each(bucketSessions, func(k, v []byte) error {
		sess, err := decode[core.Session](v)
		if err != nil {
			return err
		}
		rec := dump.Session{ID: sess.ID, Status: sess.Status, AgentID: sess.Agent.ID, LastSeq: sess.LastSeq,
			Provider: sess.Provider(), Tenant: sess.Tenant, Body: v}
		for _, key := range keys[sess.ID] {
			switch {
			case record.HasLink(sess, key):
				rec.Links = append(rec.Links, key)
			case rec.ExternalKey != "":
				return fmt.Errorf("session %s has two origin keys, %q and %q", sess.ID, rec.ExternalKey, key)
			default:
				rec.ExternalKey = key
			}
		}
		if t := d.get(bucketSessionTexts, k); t != nil {
			text := string(t)
			rec.FirstText = &text
		}
		if h := d.get(bucketLeases, k); h != nil {
			holder := string(h)
			rec.TurnHolder = &holder
		}
		if err := d.put(rec); err != nil {
			return err
		}
		if err := eachLogged(d.tx, sess.ID, 0, func(seq uint64, v []byte) (bool, error) {
			return true, d.put(dump.Event{SessionID: sess.ID, Seq: seq, Body: v})
		}); err != nil {
			return err
		}
		return eachQueued(d.tx, sess.ID, func(pos uint64, v []byte) (bool, error) {
			in, err := decode[core.Event](v)
			if err != nil {
				return false, err
			}
			return true, d.put(dump.Input{SessionID: sess.ID, Pos: pos, Type: in.Type, Body: v})
		})
	})
}

func (d dumper) keys() error {
	return d.each(bucketKeys, func(k, v []byte) error {
		if len(k) < 1 || (k[0] != kindDedupe && k[0] != kindIdempotency) {
			return fmt.Errorf("unknown kind")
		}
		rec, err := parseKeyRecord(v)
		if err != nil {
			return err
		}
		return d.put(dump.RequestKey{
			Idempotency: k[0] == kindIdempotency, Key: string(k[1:]),
			Created: time.Unix(0, int64(rec.created)), Hash: rec.hash, Answer: rec.answer,
		})
	})
}

func (d dumper) wakes() error {
	return d.each(bucketWakes, func(k, _ []byte) error {
		if len(k) <= 8 {
			return fmt.Errorf("key of %d bytes", len(k))
		}
		return d.put(dump.Wake{SessionID: string(k[8:]), Due: time.Unix(0, int64(binary.BigEndian.Uint64(k[:8])))})
	})
}

func (d dumper) sinks() error {
	err := d.each(bucketSinkPositions, func(k, v []byte) error {
		sink, id, ok := bytes.Cut(k, []byte{0})
		if !ok {
			return fmt.Errorf("no separator")
		}
		return d.put(dump.SinkPosition{Sink: string(sink), SessionID: string(id), Body: v})
	})
	if err != nil {
		return err
	}
	return d.each(bucketSinkActive, func(k, _ []byte) error {
		sink, id, ok := bytes.Cut(k, []byte{0})
		if !ok {
			return fmt.Errorf("no separator")
		}
		return d.put(dump.SinkMark{Sink: string(sink), SessionID: string(id)})
	})
}

func (d dumper) vaults() error {
	err := d.each(bucketVaults, func(k, v []byte) error {
		return d.put(dump.Vault{ID: string(k), Body: v})
	})
	if err != nil {
		return err
	}
	return d.each(bucketCredentials, func(k, v []byte) error {
		c, err := decode[core.Credential](v)
		if err != nil {
			return err
		}
		return d.put(dump.Credential{ID: string(k), VaultID: c.VaultID, Body: v, Sealed: d.get(bucketCredentialSecrets, k)})
	})
}

func (d dumper) environments() error {
	return d.each(bucketEnvironments, func(k, v []byte) error {
		e, err := decode[core.Environment](v)
		if err != nil {
			return err
		}
		return d.put(dump.Environment{ID: string(k), Name: e.Name, Body: v})
	})
}

func (d dumper) installations() error {
	return d.each(bucketInstallations, func(k, v []byte) error {
		in, err := decode[core.Installation](v)
		if err != nil {
			return err
		}
		return d.put(dump.Installation{ID: string(k), Provider: in.Provider, ExternalID: in.ExternalID, Body: v,
			SealedTokens: d.get(bucketInstallationTokens, k)})
	})
}

func (d dumper) once() error {
	return d.each(bucketOnce, func(k, v []byte) error {
		if len(v) != 8 {
			return fmt.Errorf("expiry of %d bytes", len(v))
		}
		return d.put(dump.Once{Key: string(k), Until: time.Unix(0, int64(binary.BigEndian.Uint64(v)))})
	})
}

// destinations puts the destinations, then every delivery, then the
// streams of pending deliveries with their due times.
func (d dumper) destinations() error {
	err := d.each(bucketDestinations, func(k, v []byte) error {
		dst, err := decode[core.Destination](v)
		if err != nil {
			return err
		}
		return d.put(dump.Destination{ID: string(k), SessionID: dst.SessionID, AgentID: dst.AgentID, Status: dst.Status,
			Body: v, SealedSecret: d.get(bucketDestinationSecrets, k)})
	})
	if err != nil {
		return err
	}
	if err := d.each(bucketDeliveries, func(k, v []byte) error {
		dl, err := decode[core.Delivery](v)
		if err != nil {
			return err
		}
		return d.put(dump.Delivery{ID: string(k), DestinationID: dl.DestinationID, SessionID: dl.SessionID, Seq: dl.Seq, State: dl.State, Body: v})
	}); err != nil {
		return err
	}
	// A stream is in the queue while it has pending deliveries; it is due
	// only while scheduled (a paused destination's streams are not).
	var last []byte
	return d.each(bucketOutbox, func(k, _ []byte) error {
		if len(k) < 8 {
			return fmt.Errorf("key of %d bytes", len(k))
		}
		sk := k[:len(k)-8]
		if bytes.Equal(sk, last) {
			return nil
		}
		last = sk
		st, ok := splitStream(sk)
		if !ok {
			return fmt.Errorf("not a stream")
		}
		rec := dump.DeliveryStream{DestinationID: st.DestinationID, SessionID: st.SessionID}
		if due := d.get(bucketOutboxStreams, sk); len(due) >= 8 {
			at := time.Unix(0, int64(binary.BigEndian.Uint64(due[:8])))
			rec.Due = &at
		}
		return d.put(rec)
	})
}

// skills puts the skills' latest versions, then every version, then the
// files' contents.
func (d dumper) skills() error {
	err := d.each(bucketSkills, func(k, v []byte) error {
		sk, err := decode[core.Skill](v)
		if err != nil {
			return err
		}
		return d.put(dump.Skill{ID: string(k), Name: sk.Name, Version: sk.Version, Body: v})
	})
	if err != nil {
		return err
	}
	err = d.each(bucketSkillVersions, func(k, v []byte) error {
		id, version, err := splitVersionKey(k)
		if err != nil {
			return err
		}
		return d.put(dump.SkillVersion{SkillID: id, Version: version, Body: v})
	})
	if err != nil {
		return err
	}
	return d.each(bucketSkillContents, func(k, v []byte) error {
		if len(k) < 32 {
			return fmt.Errorf("key of %d bytes", len(k))
		}
		return d.put(dump.SkillContent{SkillID: string(k[:len(k)-32]), SHA256: hex.EncodeToString(k[len(k)-32:]), Content: v})
	})
}

// memory puts the memory stores, then every retained version of their
// files with its content.
func (d dumper) memory() error {
	err := d.each(bucketMemoryStores, func(k, v []byte) error {
		m, err := decode[core.MemoryStore](v)
		if err != nil {
			return err
		}
		return d.put(dump.MemoryStore{ID: string(k), Name: m.Name, Body: v})
	})
	if err != nil {
		return err
	}
	return d.each(bucketMemoryVersions, func(k, raw []byte) error {
		seq, v, err := decodeMemoryVersion(raw)
		if err != nil {
			return err
		}
		return d.put(dump.MemoryVersion{StoreID: v.Store, Partition: v.Partition, Path: v.Path, Version: v.Version, Seq: seq,
			Deleted: v.Deleted, Size: v.Size, Body: raw[8:], Content: d.get(bucketMemoryContents, k)})
	})
}

// stats puts the hourly counters, oldest hour first.
func (d dumper) stats() error {
	return d.each(bucketHourlyStats, func(_, v []byte) error {
		h, err := decode[core.HourStats](v)
		if err != nil {
			return err
		}
		return d.put(dump.HourStats(*h))
	})
}

// schedules puts the schedules.
func (d dumper) schedules() error {
	return d.each(bucketSchedules, func(_, v []byte) error {
		sc, err := decode[core.Schedule](v)
		if err != nil {
			return err
		}
		r := dump.Schedule{ID: sc.ID, SessionID: sc.Target.SessionID, CreatedBy: sc.CreatedBy, Body: v}
		if sc.NextAt != nil {
			r.NextAt = &sc.NextAt.Time
		}
		return d.put(r)
	})
}

// attachTokens puts the sessions' attach tokens.
func (d dumper) attachTokens() error {
	return d.each(bucketAttachTokens, func(k, v []byte) error {
		t, err := decode[core.AttachToken](v)
		if err != nil {
			return err
		}
		return d.put(dump.AttachToken{ID: t.ID, SessionID: t.SessionID, Body: v})
	})
}

// attachments puts the stored attachments' bytes.
func (d dumper) attachments() error {
	return d.each(bucketAttachments, func(k, v []byte) error {
		return d.put(dump.Attachment{ID: string(k), Data: append([]byte{}, v...)})
	})
}
