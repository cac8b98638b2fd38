package postgres

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/switchboardhq/switchboard/core"
)

// TestInputCodes: every input type has a letter of its own in notices.
func TestInputCodes(t *testing.T) {
	seen := map[byte]string{}
	for _, typ := range core.InputTypes {
		c := inputCodes[typ]
		if c == 0 {
			t.Fatalf("input type %s has no code", typ)
		}
		if other, dup := seen[c]; dup {
			t.Fatalf("%s and %s share code %c", typ, other, c)
		}
		seen[c] = typ
		if inputType(c) != typ {
			t.Fatalf("code %c reads back as %q, want %s", c, inputType(c), typ)
		}
	}
}

// TestNoticeFits: a notice stays under the server's payload limit, giving
// up the inputs' ids, then everything (the replicas lag), as the inputs
// grow.
func TestNoticeFits(t *testing.T) {
	queued := func(n int) []core.Event {
		out := make([]core.Event, n)
		for i := range out {
			out[i] = core.NewInput(core.TypeUserMessage, nil)
		}
		out[n-1] = core.NewInput(core.TypeUserInterrupt, nil)
		return out
	}
	for _, tc := range []struct {
		name           string
		inputs         int
		ids, codes, lg bool
	}{
		{"few", 3, true, true, false},
		{"hundreds", 400, false, true, false},
		{"thousands", 8000, false, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := core.Change{SessionID: core.NewID("ses"), Provider: "slack", Status: core.StatusQueued, Queued: queued(tc.inputs)}
			v, err := encodeNotice("r1", c)
			if err != nil {
				t.Fatal(err)
			}
			if len(v) > maxNotice {
				t.Fatalf("%d bytes", len(v))
			}
			var n notice
			if err := json.Unmarshal(v, &n); err != nil {
				t.Fatal(err)
			}
			if n.Replica != "r1" || n.Session != c.SessionID || n.Provider != "slack" || n.Lagged != tc.lg ||
				(len(n.QueuedIDs) == tc.inputs) != tc.ids || (len(n.Queued) == tc.inputs) != tc.codes {
				t.Fatalf("notice %.200s", v)
			}
			if tc.codes && !strings.HasSuffix(n.Queued, "i") {
				t.Fatalf("codes %q do not end with the interrupt", n.Queued)
			}
		})
	}
}

// TestLaggedNotice: a notice that gave up its content makes every
// subscriber recover from the store.
func TestLaggedNotice(t *testing.T) {
	s, _ := openTest(t, Options{})
	sub := s.Subscribe("test", 4)
	defer sub.Close()
	v, err := encodeNotice("another", core.Change{SessionID: "ses_1", Queued: make([]core.Event, 8000)})
	if err != nil {
		t.Fatal(err)
	}
	s.listener.announce(t.Context(), &pgconn.Notification{Payload: string(v)})
	select {
	case <-sub.Lagged:
	default:
		t.Fatal("the subscriber was not told it lagged")
	}
}
