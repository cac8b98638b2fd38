package api

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// A client token is "sbt_<session id>_<secret>": it names its session, so
// checking one is a lookup and a constant-time comparison of hashes.
const tokenPrefix = "sbt_"

// NewClientToken returns a token for session id and the hash to store.
func NewClientToken(sessionID string) (token, hash string) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic("api: crypto/rand failed: " + err.Error())
	}
	token = tokenPrefix + sessionID + "_" + hex.EncodeToString(b)
	return token, hashToken(token)
}

func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// TokenSession returns the session id a token claims to be for.
func TokenSession(token string) (string, bool) {
	rest, ok := strings.CutPrefix(token, tokenPrefix)
	if !ok {
		return "", false
	}
	n := len(core.PrefixSession) + 27 // a session id's length
	if len(rest) <= n || rest[n] != '_' || !core.HasPrefix(rest[:n], core.PrefixSession) {
		return "", false
	}
	id := rest[:n]
	return id, true
}

// CheckClientToken reports whether token is s's client token.
func CheckClientToken(s *core.Session, token string) bool {
	if s.ClientTokenHash == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(hashToken(token)), []byte(s.ClientTokenHash)) == 1
}
