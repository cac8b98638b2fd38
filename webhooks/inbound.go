package webhooks

// Inbound webhooks: the part every platform's intake shares. A request is
// read raw up to a size limit, its signature and timestamp are checked
// before anything is decoded, and rejections answer as the API's JSON
// errors (bad signature or stale timestamp → 401, oversized → 413,
// malformed → 400), always before the provider stores anything.

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/core/web"
)

// DefaultInboundMaxBody bounds an inbound webhook body. Slack, GitHub and
// Linear payloads are far smaller; GitHub caps its own at 25 MB, which no
// event this gateway handles comes near.
const DefaultInboundMaxBody = 1 << 20

// DefaultReplayWindow is how far a signed timestamp may be from now
// (Slack's recommendation: five minutes).
const DefaultReplayWindow = 5 * time.Minute

// Rejections of inbound requests, wrapped around the core sentinels so the
// API's error mapping answers them.
var (
	ErrBadSignature = fmt.Errorf("webhook signature does not verify: %w", core.ErrUnauthorized)
	ErrStale        = fmt.Errorf("webhook timestamp is outside the replay window: %w", core.ErrUnauthorized)
)

// Verifier checks an inbound request's signature over its raw body; it
// returns an error wrapping core.ErrUnauthorized to refuse it.
type Verifier func(header http.Header, body []byte) error

// Inbound serves one platform's webhook endpoint: it reads the raw body
// (at most MaxBody bytes), verifies it, and only then calls Handle, which
// decodes, stores and answers. Handle's errors are written as the API's
// JSON errors: a core.ErrInvalid is a 400 and stores nothing.
type Inbound struct {
	MaxBody int64 // default DefaultInboundMaxBody
	Verify  Verifier
	Handle  func(w http.ResponseWriter, r *http.Request, body []byte) error
	Logger  *slog.Logger
}

func (in *Inbound) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	log := in.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	body, err := ReadBody(w, r, in.MaxBody)
	if err == nil {
		err = in.Verify(r.Header, body)
		if err != nil {
			// Logged without the body: an unverified body is the sender's,
			// and may be anything.
			log.Warn("inbound webhook refused", "path", r.URL.Path, "err", err)
		}
	}
	if err == nil {
		err = in.Handle(w, r, body)
	}
	if err != nil {
		web.WriteError(w, r, log, err)
	}
}

// ReadBody reads the raw body, refusing one over max bytes (default
// DefaultInboundMaxBody) with an error the API maps to a 413.
func ReadBody(w http.ResponseWriter, r *http.Request, max int64) ([]byte, error) {
	if max <= 0 {
		max = DefaultInboundMaxBody
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, max))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, err
		}
		return nil, fmt.Errorf("read webhook body: %v: %w", err, core.ErrInvalid)
	}
	return b, nil
}

// CheckTimestamp checks a signed timestamp (unix seconds, as Slack's
// X-Slack-Request-Timestamp) against now: more than window away in either
// direction is ErrStale, so a captured request cannot be replayed later.
func CheckTimestamp(unix string, now time.Time, window time.Duration) error {
	if window <= 0 {
		window = DefaultReplayWindow
	}
	sec, err := strconv.ParseInt(unix, 10, 64)
	if err != nil {
		return fmt.Errorf("webhook timestamp %q is not unix seconds: %w", unix, core.ErrUnauthorized)
	}
	d := now.Sub(time.Unix(sec, 0))
	if d > window || d < -window {
		return ErrStale
	}
	return nil
}

// HMACHex is the hex HMAC-SHA256 of the concatenated parts under secret,
// the signature scheme of Slack (over "v0:<ts>:<body>"), GitHub and
// Linear (over the body).
func HMACHex(secret string, parts ...[]byte) string {
	m := hmac.New(sha256.New, []byte(secret))
	for _, p := range parts {
		m.Write(p)
	}
	return hex.EncodeToString(m.Sum(nil))
}

// EqualSignature compares a received signature with the expected one in
// constant time.
func EqualSignature(got, want string) bool {
	return hmac.Equal([]byte(got), []byte(want))
}
