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

// bucketSinkClaims holds which holder renders a sink's output of a
// session; doc.go describes it.
const bucketSinkClaims = "sink_claims"

func loadSinkClaim(tx *bbolt.Tx, key []byte) (claimRecord, error) {
	var c claimRecord
	v := bkt(tx, bucketSinkClaims).Get(key)
	if v == nil {
		return c, nil
	}
	if err := json.Unmarshal(v, &c); err != nil {
		return c, fmt.Errorf("sink claim: %w", err)
	}
	return c, nil
}

// checkSinkClaim refuses a write of a claim the stream has moved on from.
func checkSinkClaim(tx *bbolt.Tx, key []byte, c core.Claim) error {
	cur, err := loadSinkClaim(tx, key)
	if err != nil {
		return err
	}
	return record.SinkClaimed(cur.Epoch, c)
}

// ClaimSink grants holder a sink's output of a session; see
// core.SinkStore.
func (s *Store) ClaimSink(ctx context.Context, sink, sessionID, holder string, ttl time.Duration) (core.Claim, bool, error) {
	if err := record.CheckSinkClaim(sink, sessionID, holder, ttl); err != nil {
		return core.Claim{}, false, err
	}
	if err := ctxErr(ctx); err != nil {
		return core.Claim{}, false, err
	}
	var out core.Claim
	var ok bool
	key := sinkKey(sink, sessionID)
	err := s.commit.do(func(tx *bbolt.Tx) error {
		ok = false
		c, err := loadSinkClaim(tx, key)
		if err != nil {
			return err
		}
		now := s.now().UnixMilli()
		if c.Holder != holder && s.live(c, now) {
			return nil
		}
		c.Epoch++
		c.Holder, c.Boot, c.Expires = holder, s.boot, now+ttl.Milliseconds()
		out, ok = core.Claim{Holder: holder, Epoch: c.Epoch}, true
		return putJSON(tx, bucketSinkClaims, string(key), c)
	})
	if err != nil {
		return core.Claim{}, false, fmt.Errorf("claim sink %s of %s: %w", sink, sessionID, err)
	}
	return out, ok, nil
}

// RenewSinkClaim extends a live claim; see core.SinkStore.
func (s *Store) RenewSinkClaim(ctx context.Context, sink, sessionID string, claim core.Claim, ttl time.Duration) error {
	if err := ctxErr(ctx); err != nil {
		return err
	}
	err := s.changeSinkClaim(sink, sessionID, claim, core.ErrLeaseLost, func(c *claimRecord) {
		c.Expires = s.now().UnixMilli() + ttl.Milliseconds()
	})
	if err != nil {
		return fmt.Errorf("renew sink claim %s of %s: %w", sink, sessionID, err)
	}
	return nil
}

// ReleaseSinkClaim ends a claim now; see core.SinkStore.
func (s *Store) ReleaseSinkClaim(ctx context.Context, sink, sessionID string, claim core.Claim) error {
	err := s.changeSinkClaim(sink, sessionID, claim, nil, func(c *claimRecord) {
		c.Holder, c.Boot, c.Expires = "", "", 0
	})
	if err != nil {
		return fmt.Errorf("release sink claim %s of %s: %w", sink, sessionID, err)
	}
	return nil
}

// changeSinkClaim applies change to the stream's claim while claim is
// the one granted last and not released; otherwise it answers lost.
func (s *Store) changeSinkClaim(sink, sessionID string, claim core.Claim, lost error, change func(*claimRecord)) error {
	key := sinkKey(sink, sessionID)
	return s.commit.do(func(tx *bbolt.Tx) error {
		c, err := loadSinkClaim(tx, key)
		if err != nil {
			return err
		}
		if c.Epoch != claim.Epoch || c.Holder != claim.Holder || c.Holder == "" {
			return lost
		}
		change(&c)
		return putJSON(tx, bucketSinkClaims, string(key), c)
	})
}
