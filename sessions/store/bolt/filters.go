package bolt

import (
	"fmt"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
	"go.etcd.io/bbolt"
)

// What ListSessions filters by beside the record; doc.go describes them.
const (
	bucketSessionsByProvider = "sessions_by_provider"
	bucketSessionsByTenant   = "sessions_by_tenant"
	bucketSessionTexts       = "session_texts"
)

// metaFiltersBuilt marks a file whose filter buckets cover every session:
// files of earlier releases get them built once, at open.
const metaFiltersBuilt = "session_filters_built"

// indexKey is value ‖ 0x00 ‖ session id: a prefix scan on value ‖ 0x00
// lists the value's sessions in id order.
func indexKey(value, id string) []byte {
	return append(append([]byte(value), 0), id...)
}

// indexSession enters a new session in the provider and tenant indexes;
// both are fixed at creation.
func indexSession(tx *bbolt.Tx, sess *core.Session) error {
	if err := bkt(tx, bucketSessionsByProvider).Put(indexKey(sess.Provider(), sess.ID), nil); err != nil {
		return err
	}
	if sess.Tenant == "" {
		return nil
	}
	return bkt(tx, bucketSessionsByTenant).Put(indexKey(sess.Tenant, sess.ID), nil)
}

// keepFirstText keeps what Text filters by, once: from the first inputs
// that hold a user message.
func keepFirstText(tx *bbolt.Tx, id string, inputs []core.Event) error {
	texts := bkt(tx, bucketSessionTexts)
	if texts.Get([]byte(id)) != nil {
		return nil
	}
	text, ok := record.FirstText(inputs)
	if !ok {
		return nil
	}
	return texts.Put([]byte(id), []byte(text))
}

// buildFilters fills the filter buckets of a file written before they
// existed: every session's index entries, and its first text from its
// log, then its queue.
func buildFilters(tx *bbolt.Tx) error {
	meta := bkt(tx, bucketMeta)
	if meta.Get([]byte(metaFiltersBuilt)) != nil {
		return nil
	}
	err := bkt(tx, bucketSessions).ForEach(func(k, v []byte) error {
		sess, err := record.Decode[core.Session]("session", v)
		if err != nil {
			return err
		}
		if err := indexSession(tx, sess); err != nil {
			return err
		}
		logged := func(fn positionFunc) error { return eachLogged(tx, sess.ID, 0, fn) }
		queued := func(fn positionFunc) error { return eachQueued(tx, sess.ID, fn) }
		for _, each := range []func(positionFunc) error{logged, queued} {
			events, err := userMessages(sess.ID, each)
			if err != nil {
				return err
			}
			if err := keepFirstText(tx, sess.ID, events); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("build session filters: %w", err)
	}
	return meta.Put([]byte(metaFiltersBuilt), []byte{1})
}

// userMessages reads a session's log or queue, walked by each, up to its
// first user message.
func userMessages(id string, each func(positionFunc) error) ([]core.Event, error) {
	var found []core.Event
	err := each(func(_ uint64, v []byte) (bool, error) {
		e, err := record.DecodeEvent("event", v)
		if err != nil {
			return false, fmt.Errorf("session %s: %w", id, err)
		}
		if _, ok := record.FirstText([]core.Event{*e}); ok {
			found = []core.Event{*e}
			return false, nil
		}
		return true, nil
	})
	return found, err
}
