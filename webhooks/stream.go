package webhooks

import (
	"context"
	"errors"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// sendAhead bounds how many of a stream's attempts may wait for their
// record while the stream goes on: a receiver that answers at once gets
// the next delivery without waiting for a disk sync, and the syncs of
// many attempts are shared. The receiver still sees each delivery only
// after the one before was answered with a 2xx; a crash before the
// records commit sends at most this many again (a receiver drops repeats
// by their webhook-id, as it must for any retry). A sync that runs long
// can fill the window and stall the stream; a wider one rides it out
// (BenchmarkDelivery on a disk of uneven syncs: 0.275 of raw POSTs with
// 8, 0.288 with 32, medians of 22 runs each).
const sendAhead = 32

// sent is an attempt whose record is under way.
type sent struct {
	d      *core.Delivery
	r      core.AttemptResult
	answer <-chan core.RecordedAttempt
}

// deliverStream delivers a claimed stream in order. After each success it
// sends the next queued delivery while the attempts before are being
// recorded, at most sendAhead of them; it waits for every record before it
// asks the store for more, so the store's next stays the one that counts,
// and stops where the store ends the stream (a failure waiting for its
// retry, a pause, a lost claim).
func (s *Service) deliverStream(ctx context.Context, c core.ClaimedDelivery) {
	// Recorded even when a stop began meanwhile: the answer came.
	rctx := context.WithoutCancel(ctx)
	var inflight []sent
	var ahead []*core.Delivery
	// sentAhead: d was read ahead, not handed out by the store, so a
	// pause committed since must stop it here (the store's answer to the
	// records before would stop the stream there).
	sentAhead := false
	for d := c.Delivery; d != nil; {
		r, err := s.attempt(ctx, d, sentAhead)
		if errors.Is(err, errPausedAhead) {
			// A pause makes no other attempt; the records in flight
			// say where the stream resumes.
			next, goOn := s.settle(inflight)
			if !goOn {
				return
			}
			inflight, ahead = nil, nil
			d, sentAhead = next, false
			continue
		}
		if err != nil {
			s.settle(inflight)
			return
		}
		inflight = append(inflight, sent{d: d, r: r, answer: s.rec.submit(rctx, c.Claim, d.ID, r)})
		last := d
		d = nil
		if r.Success && ctx.Err() == nil {
			if len(ahead) == 0 {
				ahead = s.readAhead(ctx, last)
			}
			if len(ahead) > 0 {
				d, ahead, sentAhead = ahead[0], ahead[1:], true
			}
		}
		if d != nil && len(inflight) < sendAhead {
			continue
		}
		if d != nil {
			// The window is full: the oldest record makes room.
			next, goOn := s.recorded(inflight[0])
			inflight = inflight[1:]
			if !goOn || next == nil {
				// The store ended the stream there (a lost claim, a
				// pause): what was sent past it is recorded if the claim
				// allows, and sent again by the next holder if not.
				s.settle(inflight)
				return
			}
			continue
		}
		// Nothing more to send: once every attempt is recorded, the last
		// record says what comes next. What was read ahead is dropped: a
		// failure stopped the sending ahead, and the stream goes on from
		// where the store says (a retry, or the one behind a dead letter,
		// which is the first of those read ahead and must not go twice).
		next, goOn := s.settle(inflight)
		inflight, ahead = nil, nil
		if !goOn {
			return
		}
		d, sentAhead = next, false
	}
}

// readAhead returns the deliveries queued behind last that may be sent
// before last's record is in; none when the store cannot say.
func (s *Service) readAhead(ctx context.Context, last *core.Delivery) []*core.Delivery {
	ds, err := s.cfg.Store.QueuedDeliveries(ctx, last.Stream(), last.Seq, sendAhead)
	if err != nil {
		if ctx.Err() == nil {
			s.log.Warn("read a delivery stream ahead", "destination_id", last.DestinationID, "session_id", last.SessionID, "err", err)
		}
		return nil
	}
	return ds
}

// settle waits for the records of every attempt sent and returns the
// stream's next delivery as the last record gives it; goOn is false when
// a record failed or one before the last ended the stream.
func (s *Service) settle(inflight []sent) (next *core.Delivery, goOn bool) {
	goOn = true
	for i, a := range inflight {
		n, ok := s.recorded(a)
		if !ok || (n == nil && i < len(inflight)-1) {
			goOn = false
		}
		next = n
	}
	if !goOn {
		return nil, false
	}
	return next, true
}

// recorded waits for an attempt's record and logs what it tells; ok is
// false when the attempt could not be recorded.
func (s *Service) recorded(a sent) (next *core.Delivery, ok bool) {
	out := <-a.answer
	d := a.d
	if errors.Is(out.Err, core.ErrLeaseLost) {
		// Another replica took the stream over (this one stalled past the
		// claim): it delivers from here.
		s.log.Warn("delivery stream claimed by another replica; leaving it", "delivery_id", d.ID, "destination_id", d.DestinationID, "session_id", d.SessionID)
		return nil, false
	}
	if out.Err != nil {
		// The claim keeps the stream until it runs out, so no one is
		// handed it straight back while the store is failing. The store's
		// next leaves out a stream its own holder claims, so nothing
		// would wake the dispatcher for it in a quiet store: this does.
		s.log.Error("record a delivery attempt", "delivery_id", d.ID, "err", out.Err)
		time.AfterFunc(s.claimTTL()+storeRetry, s.Notify)
		return nil, false
	}
	if !a.r.Success {
		s.logFailure(d, a.r)
	}
	return out.Next, true
}
