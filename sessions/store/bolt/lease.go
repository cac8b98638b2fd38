package bolt

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/record"
	"go.etcd.io/bbolt"
)

// Lease bucket names; doc.go describes what each holds.
const (
	bucketRunLeases = "run_leases"
	bucketReplicas  = "replicas"
)

// runLease is a session's lease record. It outlives the lease: Epoch only
// grows, and Last keeps the holder that ran the session last (affinity).
type runLease struct {
	Holder string `json:"holder,omitempty"` // "" when released
	// Boot names the Open that granted the lease: the data directory's
	// file lock admits one process at a time, so a lease or heartbeat of
	// an earlier Open belongs to a process that is gone.
	Boot    string `json:"boot,omitempty"`
	Epoch   uint64 `json:"epoch"`
	Expires int64  `json:"expires_ms,omitempty"` // store clock, unix ms
	Last    string `json:"last,omitempty"`
}

// replica is a holder's heartbeat.
type replica struct {
	Boot     string `json:"boot,omitempty"`
	Expires  int64  `json:"expires_ms"`
	Draining bool   `json:"draining,omitempty"`
}

func loadRunLease(tx *bbolt.Tx, sessionID string) (runLease, error) {
	var l runLease
	v := bkt(tx, bucketRunLeases).Get([]byte(sessionID))
	if v == nil {
		return l, nil
	}
	if err := json.Unmarshal(v, &l); err != nil {
		return l, fmt.Errorf("lease of %s: %w", sessionID, err)
	}
	return l, nil
}

func putJSON(tx *bbolt.Tx, bucket, key string, v any) error {
	b, err := core.EncodeJSON(v)
	if err != nil {
		return err
	}
	return bkt(tx, bucket).Put([]byte(key), b)
}

// checkEpoch refuses a fenced write whose lease the session has moved on
// from.
func checkEpoch(tx *bbolt.Tx, sessionID string, epoch uint64) error {
	if epoch == 0 {
		return nil
	}
	l, err := loadRunLease(tx, sessionID)
	if err != nil {
		return err
	}
	return record.Fenced(sessionID, l.Epoch, epoch)
}

// TakeLease grants holder the session's lease; see core.LeaseStore.
func (s *Store) TakeLease(ctx context.Context, sessionID, holder string, ttl time.Duration) (core.Lease, bool, error) {
	if err := record.CheckClaim("take lease", holder, ttl); err != nil {
		return core.Lease{}, false, err
	}
	if err := ctxErr(ctx); err != nil {
		return core.Lease{}, false, err
	}
	var out core.Lease
	var ok bool
	err := s.commit.do(func(tx *bbolt.Tx) (err error) {
		out, ok, _, err = s.takeLeaseTx(tx, sessionID, holder, ttl)
		return err
	})
	if err != nil {
		return core.Lease{}, false, fmt.Errorf("take lease: %w", err)
	}
	return out, ok, nil
}

// takeLeaseTx is TakeLease in tx; it also returns the session's record.
func (s *Store) takeLeaseTx(tx *bbolt.Tx, sessionID, holder string, ttl time.Duration) (core.Lease, bool, *core.Session, error) {
	sess, err := loadSession(tx, sessionID)
	if err != nil {
		return core.Lease{}, false, nil, err
	}
	l, err := loadRunLease(tx, sessionID)
	if err != nil {
		return core.Lease{}, false, nil, err
	}
	now := s.now().UnixMilli()
	if l.Holder != "" && l.Holder != holder && l.Boot == s.boot && now < l.Expires {
		return core.Lease{}, false, sess, nil
	}
	if l.Holder == "" && l.Last != "" && l.Last != holder {
		if r, alive := s.loadReplica(tx, l.Last, now); alive && !r.Draining {
			return core.Lease{}, false, sess, nil
		}
	}
	prev := l.Last
	l.Epoch++
	l.Holder, l.Last, l.Boot, l.Expires = holder, holder, s.boot, now+ttl.Milliseconds()
	if err := putJSON(tx, bucketRunLeases, sessionID, l); err != nil {
		return core.Lease{}, false, nil, err
	}
	return core.Lease{SessionID: sessionID, Holder: holder, Epoch: l.Epoch, Previous: prev}, true, sess, nil
}

func (s *Store) loadReplica(tx *bbolt.Tx, holder string, now int64) (replica, bool) {
	var r replica
	v := bkt(tx, bucketReplicas).Get([]byte(holder))
	if v == nil || json.Unmarshal(v, &r) != nil {
		return r, false
	}
	return r, r.Boot == s.boot && now < r.Expires
}

// RenewLease extends a live lease; see core.LeaseStore.
func (s *Store) RenewLease(ctx context.Context, lease core.Lease, ttl time.Duration) error {
	return s.commitTx(ctx, "renew lease of "+lease.SessionID, func(tx *bbolt.Tx) error {
		l, err := loadRunLease(tx, lease.SessionID)
		if err != nil {
			return err
		}
		if l.Epoch != lease.Epoch || l.Holder != lease.Holder {
			return core.ErrLeaseLost
		}
		l.Expires = s.now().UnixMilli() + ttl.Milliseconds()
		return putJSON(tx, bucketRunLeases, lease.SessionID, l)
	})
}

// ReleaseLease ends a lease now; see core.LeaseStore.
func (s *Store) ReleaseLease(ctx context.Context, lease core.Lease) error {
	return s.commitTx(context.WithoutCancel(ctx), "release lease of "+lease.SessionID, func(tx *bbolt.Tx) error {
		l, err := loadRunLease(tx, lease.SessionID)
		if err != nil || l.Epoch != lease.Epoch || l.Holder != lease.Holder {
			return err
		}
		l.Holder, l.Expires = "", 0
		return putJSON(tx, bucketRunLeases, lease.SessionID, l)
	})
}

// Heartbeat records that holder is alive; see core.LeaseStore.
func (s *Store) Heartbeat(ctx context.Context, holder string, ttl time.Duration, draining bool) error {
	if err := record.CheckHeartbeat(holder); err != nil {
		return err
	}
	return s.commitTx(ctx, "heartbeat", func(tx *bbolt.Tx) error {
		return putJSON(tx, bucketReplicas, holder, replica{Boot: s.boot, Expires: s.now().UnixMilli() + ttl.Milliseconds(), Draining: draining})
	})
}

// LastHolder is the holder of the session's latest grant; see
// core.LeaseStore.
func (s *Store) LastHolder(ctx context.Context, sessionID string) (string, error) {
	return viewOne(ctx, s, "last holder", func(tx *bbolt.Tx) (string, error) {
		l, err := loadRunLease(tx, sessionID)
		return l.Last, err
	})
}
