package storetest

import (
	"slices"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// RunSinks runs the core.SinkStore suite. open must return a fresh, empty
// store for each subtest.
func RunSinks(t *testing.T, open func(t *testing.T) core.SinkStore) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s core.SinkStore)
	}{
		{"sinks/position", testSinkPosition},
		{"sinks/active", testSinkActive},
		{"sinks/invalid", testSinkInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, open(t)) })
	}
}

func testSinkPosition(t *testing.T, s core.SinkStore) {
	ctx := t.Context()
	p, err := s.SinkPosition(ctx, "slack", "ses_1")
	must(t, err)
	if p.Seq != 0 || len(p.State) != 0 {
		t.Fatalf("fresh position %+v", p)
	}
	must(t, s.SaveSinkPosition(ctx, "slack", "ses_1", core.SinkPosition{Seq: 7, State: []byte(`{ "status_ts": "1.2" }`)}))
	must(t, s.SaveSinkPosition(ctx, "github", "ses_1", core.SinkPosition{Seq: 3}))
	p, err = s.SinkPosition(ctx, "slack", "ses_1")
	must(t, err)
	if p.Seq != 7 || string(p.State) != `{"status_ts":"1.2"}` {
		t.Fatalf("position %+v (%s)", p, p.State)
	}
	p, err = s.SinkPosition(ctx, "github", "ses_1")
	must(t, err)
	if p.Seq != 3 || len(p.State) != 0 {
		t.Fatalf("other sink's position %+v", p)
	}
	wantErr(t, s.SaveSinkPosition(ctx, "slack", "ses_1", core.SinkPosition{State: []byte("{")}), core.ErrInvalid)
}

func testSinkActive(t *testing.T, s core.SinkStore) {
	ctx := t.Context()
	for _, id := range []string{"ses_b", "ses_a", "ses_c"} {
		must(t, s.SetSinkActive(ctx, "slack", id, true))
	}
	must(t, s.SetSinkActive(ctx, "slack", "ses_a", true)) // twice is once
	must(t, s.SetSinkActive(ctx, "slackx", "ses_x", true))
	must(t, s.SetSinkActive(ctx, "slack", "ses_c", false))
	must(t, s.SetSinkActive(ctx, "slack", "ses_missing", false))
	got, err := s.ActiveSinkSessions(ctx, "slack")
	must(t, err)
	if !slices.Equal(got, []string{"ses_a", "ses_b"}) {
		t.Fatalf("active %v", got)
	}
	got, err = s.ActiveSinkSessions(ctx, "github")
	must(t, err)
	if len(got) != 0 {
		t.Fatalf("active of an unused sink %v", got)
	}
}

func testSinkInvalid(t *testing.T, s core.SinkStore) {
	ctx := t.Context()
	_, err := s.SinkPosition(ctx, "", "ses_1")
	wantErr(t, err, core.ErrInvalid)
	wantErr(t, s.SaveSinkPosition(ctx, "a\x00b", "ses_1", core.SinkPosition{}), core.ErrInvalid)
	wantErr(t, s.SetSinkActive(ctx, "slack", "", true), core.ErrInvalid)
}
