package postgres

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/switchboardhq/switchboard/core"
)

// notice is the payload of the notification a write sends for each change
// it reports, so that the other replicas can announce it on their commit
// streams. It names what changed, never event bodies: a replica reads the
// events by seq from the store, and NOTIFY payloads are short (under 8000
// bytes).
type notice struct {
	// Replica is the writing store's id: a store skips its own notices,
	// having published the changes itself after the commit.
	Replica  string `json:"r"`
	Session  string `json:"s"`
	Provider string `json:"p,omitempty"`
	// Sinks are the change's Sinks beyond its origin's provider.
	Sinks []string `json:"ps,omitempty"`
	// Events is the seq range [first, last] the write appended; the seqs
	// of one write are consecutive.
	Events []uint64 `json:"e,omitempty"`
	// Queued has one letter per input queued, in order (inputCodes).
	Queued string `json:"q,omitempty"`
	// QueuedIDs are the queued inputs' ids, when they fit.
	QueuedIDs []string `json:"qi,omitempty"`
	// Status is the status after the write when the write changed it.
	Status core.Status `json:"st,omitempty"`
	// Lagged replaces what did not fit: the replicas tell their
	// subscribers to recover from the store.
	Lagged bool `json:"lag,omitempty"`
}

// inputCodes name the input types in a notice, one letter each.
var inputCodes = map[string]byte{
	core.TypeUserMessage:          'm',
	core.TypeUserInterrupt:        'i',
	core.TypeUserToolConfirmation: 'c',
	core.TypeUserCustomToolResult: 'r',
	core.TypeUserRetry:            'y',
}

// maxNotice bounds a payload, below the server's limit of 8000 bytes.
const maxNotice = 7000

// encodeNotice is the payload announcing c: with the queued inputs' ids
// when they fit, else without them, else (thousands of inputs in one
// write) a notice that the replicas lagged.
func encodeNotice(replica string, c core.Change) ([]byte, error) {
	n := notice{Replica: replica, Session: c.SessionID, Provider: c.Provider, Status: c.Status, Sinks: linkSinks(c)}
	if len(c.Events) > 0 {
		n.Events = []uint64{c.Events[0].Seq, c.Events[len(c.Events)-1].Seq}
	}
	lagged := notice{Replica: replica, Session: c.SessionID, Provider: c.Provider, Sinks: linkSinks(c), Lagged: true}
	if len(c.Queued) > 0 {
		codes := make([]byte, len(c.Queued))
		n.QueuedIDs = make([]string, len(c.Queued))
		for i, e := range c.Queued {
			if codes[i] = inputCodes[e.Type]; codes[i] == 0 {
				n = lagged // a type without a code (TestInputCodes)
				break
			}
			n.QueuedIDs[i] = e.ID
		}
		if !n.Lagged {
			n.Queued = string(codes)
		}
	}
	for {
		v, err := json.Marshal(n)
		if err != nil || len(v) <= maxNotice || n.Lagged {
			return v, err
		}
		if n.QueuedIDs == nil {
			n = lagged
		}
		n.QueuedIDs = nil
	}
}

// noticeChange rebuilds the remote change a notice announces: the events
// are read from the store; the queued inputs carry their id and type only
// (their bodies are in Pending, and may be taken already).
func (s *Store) noticeChange(ctx context.Context, n notice) (core.Change, error) {
	c := core.Change{SessionID: n.Session, Provider: n.Provider, Status: n.Status, Remote: true}
	if n.Provider != "" {
		c.Sinks = append(c.Sinks, n.Provider)
	}
	c.Sinks = append(c.Sinks, n.Sinks...)
	if len(n.Events) == 2 && n.Events[1] >= n.Events[0] && n.Events[0] > 0 {
		want := int(n.Events[1] - n.Events[0] + 1)
		evs, err := s.Events(ctx, n.Session, n.Events[0]-1, want)
		if err != nil {
			return c, err
		}
		if len(evs) != want || evs[0].Seq != n.Events[0] {
			return c, fmt.Errorf("session %s: read %d events from seq %d, announced %v", n.Session, len(evs), n.Events[0], n.Events)
		}
		c.Events = evs
	} else if len(n.Events) > 0 {
		return c, fmt.Errorf("session %s: malformed seq range %v", n.Session, n.Events)
	}
	for i := range len(n.Queued) {
		e := core.Event{SessionID: n.Session, Type: inputType(n.Queued[i])}
		e.Level = core.InputLevel(e.Type)
		if len(n.QueuedIDs) == len(n.Queued) {
			e.ID = n.QueuedIDs[i]
		}
		c.Queued = append(c.Queued, e)
	}
	return c, nil
}

// linkSinks are c's sinks beyond its origin's provider, which the notice
// names apart.
func linkSinks(c core.Change) []string {
	var out []string
	for _, p := range c.Sinks {
		if p != c.Provider {
			out = append(out, p)
		}
	}
	return out
}

func inputType(code byte) string {
	for t, c := range inputCodes {
		if c == code {
			return t
		}
	}
	return ""
}

// notices are the payloads announcing changes, encoded before the write
// commits (a change that cannot be announced refuses the write) and handed
// to the notifier once it has.
func (s *Store) notices(changes []core.Change) ([]string, error) {
	if len(changes) == 0 {
		return nil, nil
	}
	payloads := make([]string, len(changes))
	for i, c := range changes {
		v, err := encodeNotice(s.replica, c)
		if err != nil {
			return nil, fmt.Errorf("notify: %w", err)
		}
		payloads[i] = string(v)
	}
	return payloads, nil
}

// laggedNotice tells the receivers to recover from the store: the
// notifier sends it in place of more notices than it keeps.
func laggedNotice(replica string) string {
	v, _ := json.Marshal(notice{Replica: replica, Lagged: true})
	return string(v)
}

// channelPrefix begins the name of a deployment's notification channel.
const channelPrefix = "switchboard_commits_"

// channelName is the notification channel of the deployment whose tables
// are in schema: channels are per database, and each schema is a
// deployment of its own. Names longer than an identifier may be (63
// bytes) use a digest of the schema.
func channelName(schema string) string {
	if name := channelPrefix + schema; len(name) <= 63 {
		return name
	}
	sum := sha256.Sum256([]byte(schema))
	return channelPrefix + hex.EncodeToString(sum[:16])
}

// currentChannel names the channel of the schema the store's tables are
// in.
func currentChannel(ctx context.Context, q querier) (string, error) {
	var schema *string
	if err := q.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		return "", fmt.Errorf("read the current schema: %w", err)
	}
	if schema == nil || strings.TrimSpace(*schema) == "" {
		return "", errors.New("no current schema: the search_path names no schema that exists")
	}
	return channelName(*schema), nil
}

// newReplicaID names a store among the replicas sharing a database.
func newReplicaID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
