package record

import (
	"fmt"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// CheckClaim refuses, before any transaction, a claim that op makes
// ("take lease", "claim deliveries") for no holder or for no time.
func CheckClaim(op, holder string, ttl time.Duration) error {
	if holder == "" || ttl <= 0 {
		return fmt.Errorf("%s: holder %q, ttl %v: %w", op, holder, ttl, core.ErrInvalid)
	}
	return nil
}

// CheckSinkClaim is CheckClaim of a sink's output of a session, the sink
// and session checked (ValidSink).
func CheckSinkClaim(sink, sessionID, holder string, ttl time.Duration) error {
	if err := CheckClaim("claim sink", holder, ttl); err != nil {
		return err
	}
	return ValidSink(sink, sessionID)
}

// CheckHeartbeat refuses a heartbeat of no holder.
func CheckHeartbeat(holder string) error {
	if holder == "" {
		return fmt.Errorf("heartbeat: no holder: %w", core.ErrInvalid)
	}
	return nil
}

// CheckOnceKey refuses an empty single-use key.
func CheckOnceKey(key string) error {
	if key == "" {
		return fmt.Errorf("once: empty key: %w", core.ErrInvalid)
	}
	return nil
}

// ClaimLimit is how many due streams ClaimDeliveries claims at most.
func ClaimLimit(limit int) int {
	if limit <= 0 {
		return 100
	}
	return limit
}

// Fenced refuses a write of a session fenced at epoch (0: not fenced)
// when the session's lease is at cur: another holder took it since.
func Fenced(sessionID string, cur, epoch uint64) error {
	if epoch != 0 && cur != epoch {
		return fmt.Errorf("session %s at lease epoch %d, write of epoch %d: %w", sessionID, cur, epoch, core.ErrLeaseLost)
	}
	return nil
}

// StreamClaimed refuses a write of claim c to a delivery stream claimed
// at cur: another holder claimed it since, or its claim went with its
// destination. A claim of epoch 0 was never granted.
func StreamClaimed(st core.Stream, cur uint64, c core.Claim) error {
	if c.Epoch == 0 || cur != c.Epoch {
		return fmt.Errorf("stream %s/%s at claim epoch %d, write of epoch %d: %w", st.DestinationID, st.SessionID, cur, c.Epoch, core.ErrLeaseLost)
	}
	return nil
}

// SinkClaimed refuses a write of claim c to a sink's output claimed at
// cur since.
func SinkClaimed(cur uint64, c core.Claim) error {
	if cur != c.Epoch {
		return fmt.Errorf("sink claimed at epoch %d, write of epoch %d: %w", cur, c.Epoch, core.ErrLeaseLost)
	}
	return nil
}
