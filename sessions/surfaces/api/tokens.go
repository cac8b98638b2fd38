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

// An attach token is "sba_<session id>_<token id>_<secret>": it names
// its session, for a client to know which one it opens, and its record.
const attachPrefix = "sba_"

// idLen is the length of an id of a three-letter prefix ("ses_…").
const idLen = len(core.PrefixSession) + 27

// NewClientToken returns a token for session id and the hash to store.
func NewClientToken(sessionID string) (token, hash string) {
	token = tokenPrefix + sessionID + "_" + secret()
	return token, hashToken(token)
}

// NewAttachToken returns a new attach token of a session, its id and the
// hash to store.
func NewAttachToken(sessionID string) (token, id, hash string) {
	id = core.NewID(core.PrefixAttachToken)
	token = attachPrefix + sessionID + "_" + id + "_" + secret()
	return token, id, hashToken(token)
}

func secret() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic("api: crypto/rand failed: " + err.Error())
	}
	return hex.EncodeToString(b)
}

// ParseAttachToken returns the session and token ids an attach token
// claims.
func ParseAttachToken(token string) (sessionID, id string, ok bool) {
	rest, ok := strings.CutPrefix(token, attachPrefix)
	if !ok || len(rest) <= 2*idLen+1 || rest[idLen] != '_' || rest[2*idLen+1] != '_' {
		return "", "", false
	}
	sessionID, id = rest[:idLen], rest[idLen+1:2*idLen+1]
	if !core.HasPrefix(sessionID, core.PrefixSession) || !core.HasPrefix(id, core.PrefixAttachToken) {
		return "", "", false
	}
	return sessionID, id, true
}

// CheckAttachToken reports whether token is t's.
func CheckAttachToken(t *core.AttachToken, token string) bool {
	return t.Hash != "" && subtle.ConstantTimeCompare([]byte(hashToken(token)), []byte(t.Hash)) == 1
}

func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// TokenSession returns the session id a client token or an attach token
// claims to be for.
func TokenSession(token string) (string, bool) {
	if id, _, ok := ParseAttachToken(token); ok {
		return id, true
	}
	rest, ok := strings.CutPrefix(token, tokenPrefix)
	if !ok {
		return "", false
	}
	if len(rest) <= idLen || rest[idLen] != '_' || !core.HasPrefix(rest[:idLen], core.PrefixSession) {
		return "", false
	}
	return rest[:idLen], true
}

// CheckClientToken reports whether token is s's client token.
func CheckClientToken(s *core.Session, token string) bool {
	if s.ClientTokenHash == "" {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(hashToken(token)), []byte(s.ClientTokenHash)) == 1
}
