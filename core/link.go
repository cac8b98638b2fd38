package core

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// The events that record a session's links (internal level).
const (
	TypeLinkAdded   = "session.link_added"
	TypeLinkRemoved = "session.link_removed"
)

// LinkBody is the body of session.link_added and session.link_removed:
// the key, and who added or removed it ("admin", "agent", or the
// platform's id of the person who asked).
type LinkBody struct {
	Key string `json:"key"`
	By  string `json:"by"`
	// URL is the web address of what the key names, when the one who
	// linked it knew it (a pull request the agent opened).
	URL string `json:"url,omitempty"`
}

// Link is another origin key that routes to a session: a trigger on it
// steers the session instead of starting one.
type Link struct {
	Key     string `json:"key"`
	AddedBy string `json:"added_by"`
	AddedAt Time   `json:"added_at"`
	URL     string `json:"url,omitempty"`
}

// LinkedBy names who made a link when no person did.
const (
	LinkedByAdmin = "admin"
	LinkedByAgent = "agent"
)

// keyShape is the shape of every origin key: the provider's name, a
// colon, and the platform's own address of the thread, at most 512 bytes
// of printable text without spaces. Each platform's grammar is stricter;
// the platforms know it (providers.Platform), the store only this.
var keyShape = regexp.MustCompile(`^[a-z][a-z0-9]{0,31}:[\x21-\x7e]{1,512}$`)

// KeyProvider checks that key has the shape of an origin key and says
// whose it is: the part before the first colon.
func KeyProvider(key string) (string, error) {
	if !keyShape.MatchString(key) {
		return "", fmt.Errorf("key %q: want <provider>:<the platform's address of the thread>: %w", key, ErrInvalid)
	}
	provider, _, _ := strings.Cut(key, ":")
	return provider, nil
}

// SinkProviders are the providers whose output the session goes to: its
// origin's, then its links' (a turn answers where its input came from).
func SinkProviders(s *Session) []string {
	var out []string
	if s.Origin != nil && s.Origin.Provider != "" {
		out = append(out, s.Origin.Provider)
	}
	for _, l := range s.Links {
		if p, _, _ := strings.Cut(l.Key, ":"); p != "" && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// LinkStore keeps the links of sessions. A link is in the same index as
// origin keys, so a key routes to one session, whichever it is.
type LinkStore interface {
	// AddLink routes l.Key to the session as well, logging
	// session.link_added (l) in the same transaction; ErrConflict when
	// another session's origin or link holds it. Adding a link the
	// session has is a no-op.
	AddLink(ctx context.Context, sessionID string, l LinkBody) (*Session, error)
	// RemoveLink stops routing key to the session, logging
	// session.link_removed; ErrNotFound when it is not one of its links.
	RemoveLink(ctx context.Context, sessionID, key, by string) (*Session, error)
}
