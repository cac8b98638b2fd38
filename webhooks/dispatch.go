package webhooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"
	"github.com/switchboardhq/switchboard/core"
)

// Envelope is the body of every delivery: the event with the context a
// receiver needs to route it.
type Envelope struct {
	Type      string            `json:"type"`
	SessionID string            `json:"session_id"`
	EventID   string            `json:"event_id"`
	Metadata  map[string]string `json:"metadata"` // the session's, unchanged
	Event     core.Event        `json:"event"`
}

// storeRetry is how long the dispatcher, or a stream, waits after the
// store failed.
const storeRetry = time.Second

// maxAnswer bounds how much of a receiver's answer is read (and thrown
// away, so the connection can be reused).
const maxAnswer = 64 << 10

// dispatch claims due streams and hands them to workers until ctx ends.
// It sleeps until the next retry is due (or another replica's claim runs
// out), and is woken by Notify: an append, a resume, a redelivery, or a
// worker that finished a stream.
func (s *Service) dispatch(ctx context.Context) {
	for {
		wait := time.Duration(-1) // until woken
		if free := s.free(); free > 0 {
			due, next, err := s.cfg.Store.ClaimDeliveries(ctx, s.cfg.Holder, s.claimTTL(), time.Now(), free)
			if err != nil {
				if ctx.Err() != nil {
					return
				}
				s.log.Error("read the delivery queue", "err", err)
				wait = storeRetry
			}
			for _, d := range due {
				s.startStream(ctx, d)
			}
			// next may have passed already (the claim was full, or time
			// went by since the read): then look again at once; with every
			// worker busy, the next round sleeps until one finishes.
			if !next.IsZero() {
				wait = max(time.Until(next), 0)
			}
		}
		if !s.sleep(ctx, wait) {
			return
		}
	}
}

// claimTTL is how long a claim lasts: it covers the longest attempt, so a
// live holder never loses a stream while its post is under way, and
// ClaimTTL beyond it for the store's calls around the post.
func (s *Service) claimTTL() time.Duration {
	return s.cfg.Client.Timeout + s.cfg.ClaimTTL
}

// sleep waits for wait (negative: no timer), Notify or ctx's end.
func (s *Service) sleep(ctx context.Context, wait time.Duration) bool {
	var timer <-chan time.Time
	if wait >= 0 {
		t := time.NewTimer(wait)
		defer t.Stop()
		timer = t.C
	}
	select {
	case <-ctx.Done():
		return false
	case <-s.wake:
	case <-timer:
	}
	return true
}

// free is how many more streams the workers can take.
func (s *Service) free() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg.Workers - s.running
}

// startStream delivers a claimed stream from d on, in order, for as long
// as its next delivery is due; the claim keeps every other worker, here
// or on another replica, off the stream meanwhile.
func (s *Service) startStream(ctx context.Context, c core.ClaimedDelivery) {
	s.mu.Lock()
	s.running++
	s.mu.Unlock()
	s.wg.Go(func() {
		defer func() {
			s.mu.Lock()
			s.running--
			s.mu.Unlock()
			s.Notify()
		}()
		s.deliverStream(ctx, c)
	})
}

func (s *Service) logFailure(d *core.Delivery, r core.AttemptResult) {
	attrs := []any{"delivery_id", d.ID, "destination_id", d.DestinationID, "session_id", d.SessionID, "seq", d.Seq, "status_code", r.Attempt.StatusCode}
	if r.RetryAt.IsZero() {
		s.log.Warn("delivery dead-lettered", append(attrs, "attempts", d.AttemptCount+1, "err", r.Attempt.Error)...)
		return
	}
	s.log.Debug("delivery attempt failed", append(attrs, "retry_at", r.RetryAt, "err", r.Attempt.Error)...)
}

// attempt tries a delivery once. An error means nothing is to be
// recorded: the stop cancelled the attempt, the destination is gone
// (errDestinationGone: its queue went with it), or a delivery sent ahead
// found its destination paused since it was read (errPausedAhead).
func (s *Service) attempt(ctx context.Context, d *core.Delivery, sentAhead bool) (core.AttemptResult, error) {
	if err := ctx.Err(); err != nil {
		return core.AttemptResult{}, err
	}
	now := time.Now()
	a, gone, err := s.try(ctx, d, sentAhead, now)
	switch {
	case gone:
		return core.AttemptResult{}, errDestinationGone
	case errors.Is(err, errPausedAhead):
		return core.AttemptResult{}, err
	}
	if err := ctx.Err(); err != nil {
		return core.AttemptResult{}, err
	}
	a.At = core.NewTime(now)
	if err != nil {
		a.Error = err.Error()
	}
	r := core.AttemptResult{Attempt: a, Success: err == nil, PauseAfter: max(s.cfg.PauseAfter, 0)}
	if !r.Success {
		r.RetryAt = s.retryAt(d, failuresSince(d)+1, now)
	}
	return r, nil
}

// try sends the delivery to its destination once; gone reports that the
// destination was deleted. A panic in it is this attempt's failure, as
// any error is: logged once with its stack, recorded as "internal error"
// and tried again after its backoff.
func (s *Service) try(ctx context.Context, d *core.Delivery, sentAhead bool, now time.Time) (a core.Attempt, gone bool, err error) {
	defer core.Recover(s.log, &err, "delivery_id", d.ID, "destination_id", d.DestinationID, "session_id", d.SessionID)
	t, err := s.target(ctx, d.DestinationID)
	if err != nil {
		return a, errors.Is(err, core.ErrNotFound), err
	}
	a, err = s.send(ctx, t, d, sentAhead, now)
	return a, false, err
}

// failuresSince counts the failed attempts since the horizon started (a
// redelivery restarts it), which sets the backoff.
func failuresSince(d *core.Delivery) int {
	if d.FirstAttemptAt == nil {
		return 0
	}
	n := 0
	for _, a := range d.Attempts {
		if !a.At.Before(d.FirstAttemptAt.Time) {
			n++
		}
	}
	return n
}

// Why attempt made no attempt to record.
var (
	errPausedAhead     = errors.New("destination paused since the delivery was read ahead")
	errDestinationGone = errors.New("destination deleted")
)

// send POSTs the delivery's envelope, signed, and reads the answer.
// Anything but a 2xx is an error.
func (s *Service) send(ctx context.Context, t *target, d *core.Delivery, sentAhead bool, now time.Time) (core.Attempt, error) {
	p, err := s.cfg.Store.DeliveryPayload(ctx, d)
	if err != nil {
		return core.Attempt{}, err
	}
	if sentAhead && p.DestinationPaused {
		return core.Attempt{}, errPausedAhead
	}
	e := p.Event
	body, err := json.Marshal(Envelope{Type: e.Type, SessionID: e.SessionID, EventID: e.ID, Metadata: p.Metadata, Event: e})
	if err != nil {
		return core.Attempt{}, fmt.Errorf("encode envelope: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.url, bytes.NewReader(body))
	if err != nil {
		return core.Attempt{}, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "switchboard-webhooks")
	// The event id names the message: stable across retries and
	// redeliveries, so a receiver can drop repeats.
	req.Header.Set(standardwebhooks.HeaderWebhookID, e.ID)
	req.Header.Set(standardwebhooks.HeaderWebhookTimestamp, strconv.FormatInt(now.Unix(), 10))
	if t.sign != nil {
		sig, err := t.sign.Sign(e.ID, now, body)
		if err != nil {
			return core.Attempt{}, fmt.Errorf("sign: %w", err)
		}
		req.Header.Set(standardwebhooks.HeaderWebhookSignature, sig)
	}
	start := time.Now()
	resp, err := s.cfg.Client.Do(req)
	if err != nil {
		return core.Attempt{LatencyMS: time.Since(start).Milliseconds()}, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxAnswer))
	_ = resp.Body.Close()
	a := core.Attempt{StatusCode: resp.StatusCode, LatencyMS: time.Since(start).Milliseconds()}
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300:
		return a, nil
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		return a, fmt.Errorf("redirect to %q not followed", resp.Header.Get("Location"))
	}
	return a, fmt.Errorf("answered %d", resp.StatusCode)
}

// target returns the destination's url and signer, from the cache.
func (s *Service) target(ctx context.Context, id string) (*target, error) {
	s.mu.Lock()
	t := s.targets[id]
	s.mu.Unlock()
	if t != nil {
		return t, nil
	}
	d, err := s.cfg.Store.GetDestination(ctx, id)
	if err != nil {
		return nil, err
	}
	sealed, err := s.cfg.Store.DestinationSecret(ctx, id)
	if err != nil {
		return nil, err
	}
	t = &target{url: d.URL}
	if len(sealed) > 0 {
		plain, err := s.cfg.Sealer.Open(sealed, []byte(id))
		if err != nil {
			return nil, fmt.Errorf("open the secret of %s: %w", id, err)
		}
		if t.sign, err = signer(string(plain)); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	s.targets[id] = t
	s.mu.Unlock()
	return t, nil
}
