package bolt

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"strings"

	"github.com/switchboardhq/switchboard/sessions/store/record"

	"github.com/switchboardhq/switchboard/core"
	"go.etcd.io/bbolt"
)

func matchSession(f core.SessionFilter, sess *core.Session) bool {
	return (f.Status == "" || sess.Status == f.Status) &&
		(f.AgentID == "" || sess.Agent.ID == f.AgentID) &&
		(f.Provider == "" || sess.Provider() == f.Provider) &&
		(f.Tenant == "" || sess.Tenant == f.Tenant)
}

// ListSessions pages through sessions in id order. An OriginKey filter is
// answered from the external-key index, a Tenant or Provider filter from
// its index; the other filters check the candidates from the cursor on,
// which a page, and for Text MaxExamined, bounds.
func (s *Store) ListSessions(ctx context.Context, f core.SessionFilter) (core.SessionList, error) {
	if err := ctxErr(ctx); err != nil {
		return core.SessionList{}, err
	}
	if err := record.CheckFilter(f); err != nil {
		return core.SessionList{}, err
	}
	p := newListing(f)
	err := s.db.View(func(tx *bbolt.Tx) error {
		sessions := bkt(tx, bucketSessions)
		texts := bkt(tx, bucketSessionTexts)
		// Without a filter on the record, only the sessions a text filter
		// keeps are decoded.
		onRecord := f.Status != "" || f.AgentID != "" || f.Provider != "" || f.Tenant != ""
		return eachCandidate(tx, f, sessions, func(id, v []byte) (bool, error) {
			if v == nil {
				return true, nil
			}
			var sess *core.Session
			decode := func() (*core.Session, error) {
				if sess != nil {
					return sess, nil
				}
				var err error
				sess, err = record.Decode[core.Session]("session", v)
				return sess, err
			}
			if onRecord {
				if _, err := decode(); err != nil {
					return false, err
				}
				if !matchSession(f, sess) {
					return true, nil
				}
			}
			return p.add(string(id), string(texts.Get(id)), decode)
		})
	})
	if err != nil {
		return core.SessionList{}, fmt.Errorf("list sessions: %w", err)
	}
	return p.list, nil
}

// eachCandidate calls fn with the id and record of each session past
// f.After that the most selective index f names holds, in id order,
// until fn says stop.
func eachCandidate(tx *bbolt.Tx, f core.SessionFilter, sessions *bbolt.Bucket, fn func(id, v []byte) (bool, error)) error {
	if f.OriginKey != "" {
		sid := bkt(tx, bucketSessionKeys).Get([]byte(f.OriginKey))
		if sid == nil || string(sid) <= f.After {
			return nil
		}
		_, err := fn(sid, sessions.Get(sid))
		return err
	}
	var index, value string
	switch {
	case f.Tenant != "":
		index, value = bucketSessionsByTenant, f.Tenant
	case f.Provider != "":
		index, value = bucketSessionsByProvider, f.Provider
	}
	if index != "" {
		prefix := indexKey(value, "")
		c := bkt(tx, index).Cursor()
		from := indexKey(value, f.After)
		for k, _ := c.Seek(from); k != nil && bytes.HasPrefix(k, prefix); k, _ = c.Next() {
			if f.After != "" && bytes.Equal(k, from) {
				continue
			}
			id := k[len(prefix):]
			if more, err := fn(id, sessions.Get(id)); err != nil || !more {
				return err
			}
		}
		return nil
	}
	c := sessions.Cursor()
	k, v := c.Seek([]byte(f.After))
	if k != nil && f.After != "" && string(k) == f.After {
		k, v = c.Next()
	}
	for ; k != nil; k, v = c.Next() {
		if more, err := fn(k, v); err != nil || !more {
			return err
		}
	}
	return nil
}

// listing gathers one page from the sessions that pass the filters other
// than Text, in id order.
type listing struct {
	limit int
	// text is the Text filter folded to lower case, max the sessions it
	// may examine, examined those it did.
	text          string
	max, examined int
	lastExamined  string
	list          core.SessionList
}

func newListing(f core.SessionFilter) *listing {
	return &listing{
		limit: record.ClampLimit(f.Limit),
		text:  strings.ToLower(f.Text),
		max:   record.MaxExamined(f),
		list:  core.SessionList{Sessions: []*core.Session{}},
	}
}

// add takes the next session, with its first text; false when the page
// is complete.
func (p *listing) add(id, firstText string, load func() (*core.Session, error)) (bool, error) {
	if p.text != "" {
		if p.examined == p.max {
			p.list.HasMore = true
			if len(p.list.Sessions) < p.limit {
				p.list.Capped = true
				p.list.Next = p.lastExamined
			} else {
				p.list.Next = p.list.Sessions[p.limit-1].ID
			}
			return false, nil
		}
		p.examined++
		p.lastExamined = id
		if !strings.Contains(strings.ToLower(firstText), p.text) {
			return true, nil
		}
	}
	if len(p.list.Sessions) == p.limit {
		p.list.HasMore = true
		p.list.Next = p.list.Sessions[p.limit-1].ID
		return false, nil
	}
	sess, err := load()
	if err != nil {
		return false, err
	}
	sess.FirstText = firstText
	p.list.Sessions = append(p.list.Sessions, sess)
	return true, nil
}

// Archive makes the session read-only: it drops the queued inputs, the wake
// and any lease, since an archived session is never visited again.
func (s *Store) Archive(ctx context.Context, id string) (*core.Session, error) {
	// Archiving twice must not cost a write.
	cur, err := viewOne(ctx, s, "archive", func(tx *bbolt.Tx) (*core.Session, error) { return loadSession(tx, id) })
	if err != nil || cur.Status == core.StatusArchived {
		return cur, err
	}
	return writeSession(ctx, s, "archive", func(tx *bbolt.Tx) (*core.Session, []core.Change, error) {
		sess, err := loadSession(tx, id)
		if err != nil || sess.Status == core.StatusArchived {
			return sess, nil, err
		}
		before := sess.Status
		if err := s.setStatus(tx, sess, core.StatusArchived); err != nil {
			return nil, nil, err
		}
		sess.UpdatedAt = s.clock()
		if err := dropQueued(tx, id); err != nil {
			return nil, nil, fmt.Errorf("drop pending inputs: %w", err)
		}
		if err := clearWake(tx, id); err != nil {
			return nil, nil, err
		}
		if err := bkt(tx, bucketLeases).Delete([]byte(id)); err != nil {
			return nil, nil, err
		}
		return sess, []core.Change{changeOf(sess, before, core.Change{})}, saveSession(tx, sess)
	})
}

// CountByStatus reads the counts every status change maintains.
func (s *Store) CountByStatus(ctx context.Context) (map[core.Status]int, error) {
	return viewOne(ctx, s, "count sessions", func(tx *bbolt.Tx) (map[core.Status]int, error) {
		out := map[core.Status]int{}
		return out, bkt(tx, bucketStatusCounts).ForEach(func(k, v []byte) error {
			if len(v) != 8 {
				return fmt.Errorf("status count %s: %d bytes", k, len(v))
			}
			out[core.Status(k)] = int(binary.BigEndian.Uint64(v))
			return nil
		})
	})
}
