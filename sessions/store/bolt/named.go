package bolt

import (
	"bytes"
	"fmt"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
	"go.etcd.io/bbolt"
)

// named keeps records of one kind by id in one bucket, with their unique
// names indexed in another: environments, memory stores. Names may not
// look like ids, so resolving an id first and a name second never
// collides.
type named[T any] struct {
	kind           string // "environment", in errors
	records, names string // the buckets
	id, name       func(*T) string
}

func (n named[T]) decode(v []byte) (*T, error) {
	return record.Decode[T](n.kind, v)
}

// get resolves an id first and a name second.
func (n named[T]) get(tx *bbolt.Tx, idOrName string) (*T, error) {
	recs := bkt(tx, n.records)
	v := recs.Get([]byte(idOrName))
	if v == nil {
		if id := bkt(tx, n.names).Get([]byte(idOrName)); id != nil {
			v = recs.Get(id)
		}
	}
	if v == nil {
		return nil, fmt.Errorf("%s %q: %w", n.kind, idOrName, core.ErrNotFound)
	}
	return n.decode(v)
}

// put writes r and returns it as decoded from the stored bytes, so that
// the caller sees exactly what a later read will.
func (n named[T]) put(tx *bbolt.Tx, r *T) (*T, error) {
	v, err := record.Encode(n.kind, n.id(r), r)
	if err != nil {
		return nil, err
	}
	if err := bkt(tx, n.records).Put([]byte(n.id(r)), v); err != nil {
		return nil, err
	}
	return n.decode(v)
}

// create writes a new record under a name not taken.
func (n named[T]) create(tx *bbolt.Tx, r *T) (*T, error) {
	if bkt(tx, n.records).Get([]byte(n.id(r))) != nil {
		return nil, fmt.Errorf("%s %s already exists: %w", n.kind, n.id(r), core.ErrConflict)
	}
	if err := claimName(bkt(tx, n.names), n.kind, n.name(r), n.id(r)); err != nil {
		return nil, err
	}
	return n.put(tx, r)
}

// update writes next over cur, moving the name entry when it changed.
func (n named[T]) update(tx *bbolt.Tx, cur, next *T) (*T, error) {
	if err := moveName(bkt(tx, n.names), n.kind, n.id(cur), n.name(cur), n.name(next)); err != nil {
		return nil, err
	}
	return n.put(tx, next)
}

// claimName indexes the record with id under name in names, unless
// another holds the name; kind names the records in errors.
func claimName(names *bbolt.Bucket, kind, name, id string) error {
	if owner := names.Get([]byte(name)); owner != nil && !bytes.Equal(owner, []byte(id)) {
		return fmt.Errorf("%s name %q is taken: %w", kind, name, core.ErrConflict)
	}
	return names.Put([]byte(name), []byte(id))
}

// moveName moves the record with id from name from to name to in names.
func moveName(names *bbolt.Bucket, kind, id, from, to string) error {
	if from == to {
		return nil
	}
	if err := claimName(names, kind, to, id); err != nil {
		return err
	}
	return names.Delete([]byte(from))
}

// delete deletes the record and frees its name.
func (n named[T]) delete(tx *bbolt.Tx, r *T) error {
	if err := bkt(tx, n.names).Delete([]byte(n.name(r))); err != nil {
		return err
	}
	return bkt(tx, n.records).Delete([]byte(n.id(r)))
}
