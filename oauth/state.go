package oauth

import (
	"context"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// stateInfo labels the HKDF output that signs install states: the master
// key also derives the sealing key (sealInfo), and each use gets its own
// label so the two keys are independent.
const stateInfo = "switchboard/oauth/state/v1 hmac-sha256"

// DefaultStateTTL is how long an install state may be redeemed.
const DefaultStateTTL = 10 * time.Minute

// ErrBadState: the state is forged, malformed, for another provider,
// expired or already used. The callback answers 400.
var ErrBadState = fmt.Errorf("install state is invalid, expired or already used: %w", core.ErrInvalid)

// States issues and redeems the state parameter of install flows: signed
// with a key derived from the master key (so it cannot be forged), bound
// to a provider, expiring, and single-use (its nonce is recorded in the
// store until it expires, so a replayed callback is refused).
type States struct {
	key  []byte
	once core.OnceStore
	ttl  time.Duration
	now  func() time.Time
}

// NewStates derives the signing key from masterKey.
func NewStates(masterKey string, once core.OnceStore) (*States, error) {
	if len(masterKey) < minMasterKey {
		return nil, fmt.Errorf("master key is %d bytes: want at least %d", len(masterKey), minMasterKey)
	}
	key, err := hkdf.Key(sha256.New, []byte(masterKey), nil, stateInfo, 32)
	if err != nil {
		return nil, fmt.Errorf("derive state key: %w", err)
	}
	return &States{key: key, once: once, ttl: DefaultStateTTL, now: time.Now}, nil
}

// WithClock returns a copy using now and ttl (tests).
func (s *States) WithClock(now func() time.Time, ttl time.Duration) *States {
	c := *s
	c.now, c.ttl = now, ttl
	return &c
}

type statePayload struct {
	Provider string `json:"p"`
	Nonce    string `json:"n"`
	Expires  int64  `json:"e"` // unix seconds
}

// Issue returns a new state for provider's install flow.
func (s *States) Issue(provider string) (string, error) {
	nonce := make([]byte, 16)
	if _, err := rand.Read(nonce); err != nil {
		return "", fmt.Errorf("state nonce: %w", err)
	}
	raw, err := json.Marshal(statePayload{Provider: provider, Nonce: base64.RawURLEncoding.EncodeToString(nonce), Expires: s.now().Add(s.ttl).Unix()})
	if err != nil {
		return "", fmt.Errorf("encode state: %w", err)
	}
	body := base64.RawURLEncoding.EncodeToString(raw)
	return body + "." + base64.RawURLEncoding.EncodeToString(s.mac(body)), nil
}

func (s *States) mac(body string) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(body))
	return m.Sum(nil)
}

// Redeem checks a state returned to provider's callback and spends it.
func (s *States) Redeem(ctx context.Context, provider, state string) error {
	body, sig, ok := strings.Cut(state, ".")
	if !ok {
		return ErrBadState
	}
	mac, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(mac, s.mac(body)) {
		return ErrBadState
	}
	raw, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil {
		return ErrBadState
	}
	var p statePayload
	if err := json.Unmarshal(raw, &p); err != nil || p.Nonce == "" {
		return ErrBadState
	}
	exp := time.Unix(p.Expires, 0)
	if p.Provider != provider || !s.now().Before(exp) {
		return ErrBadState
	}
	fresh, err := s.once.Once(ctx, "oauth:state:"+p.Nonce, exp)
	if err != nil {
		return fmt.Errorf("redeem state: %w", err)
	}
	if !fresh {
		return ErrBadState
	}
	return nil
}
