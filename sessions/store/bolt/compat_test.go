package bolt

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
)

// TestOpensADataDirOfTheFirstRelease opens a data directory the first
// release wrote (testdata/release1) and finds everything it kept, in the
// encodings it kept them in; writing to it goes on from where it was.
func TestOpensADataDirOfTheFirstRelease(t *testing.T) {
	s := openRelease1(t)
	ctx := t.Context()

	a, err := s.GetAgent(ctx, "default")
	if err != nil || a.Version != 2 || a.Model != "anthropic/claude-test-2" {
		t.Fatalf("agent %+v, %v", a, err)
	}
	api, err := s.GetSession(ctx, "ses_api")
	if err != nil || api.Status != core.StatusQueued || api.Usage.OutputTokens != 5 || api.Metadata["k"] != "v" {
		t.Fatalf("api session %+v, %v", api, err)
	}
	evs, err := s.Events(ctx, "ses_api", 0, 0)
	if err != nil || len(evs) != 7 || evs[6].Seq != 7 {
		t.Fatalf("api log: %d events, %v", len(evs), err)
	}
	pending, err := s.Pending(ctx, "ses_api")
	if err != nil || len(pending) != 1 {
		t.Fatalf("pending %+v, %v", pending, err)
	}
	// Keys written then still answer: a replay, a duplicate.
	res, err := s.QueueInputs(ctx, "ses_api", core.QueueRequest{Inputs: []core.Event{message("again")}, Idempotency: &core.Idempotency{Key: "api:events:ses_api:k2", Hash: "h2"}})
	if err != nil || string(res.Replay) != `{"data":[]}` {
		t.Fatalf("idempotent replay %+v, %v", res, err)
	}
	checkSlackMidTurn(t, s, 3)
	if pos, err := s.SinkPosition(ctx, "linear", "ses_linear"); err != nil || string(pos.State) != `{"url_set":true,"answered":true,"intent":"act_ses_linear_5"}` {
		t.Fatalf("linear sink position %s, %v", pos.State, err)
	}
	// The turn left open goes on: seq is gap-free, and a mark of the first
	// release is released like one of today's.
	logged, err := s.Append(ctx, "ses_slack", core.AppendRequest{TurnID: "turn_slack_1", Events: []core.Event{
		core.NewEvent(core.TypeTurnCompleted, core.LevelInternal, core.ActorSystem, core.TurnCompletedBody{YieldReason: core.ReasonCompleted}),
	}})
	if err != nil || logged[0].Seq != 5 {
		t.Fatalf("append after the upgrade: %+v, %v", logged, err)
	}
	if ok, err := s.ReleaseSink(ctx, "slack", "ses_slack", 5); err != nil || !ok {
		t.Fatalf("release: %v, %v", ok, err)
	}

	ds, _, err := s.ListDeliveries(ctx, core.DeliveryQuery{SessionID: "ses_api"})
	if err != nil || len(ds) != 1 || ds[0].State != core.DeliveryPending || ds[0].Seq != 7 {
		t.Fatalf("deliveries %+v, %v", ds, err)
	}
	due, _, err := s.ClaimDeliveries(ctx, "run_a", time.Minute, time.Now(), 10)
	if err != nil || len(due) != 1 || due[0].ID != ds[0].ID {
		t.Fatalf("due deliveries %+v, %v", due, err)
	}
	in, err := s.FindInstallation(ctx, "slack", "T1")
	if err != nil || !in.HasToken || in.Name != "Acme" {
		t.Fatalf("installation %+v, %v", in, err)
	}
	if sealed, err := s.InstallationTokens(ctx, in.ID); err != nil || string(sealed) != "sealed-tokens" {
		t.Fatalf("tokens %q, %v", sealed, err)
	}
	if first, err := s.Once(ctx, "oauth:state:n1", time.Now().Add(time.Hour)); err != nil || first {
		t.Fatalf("a single-use key of the first release used again: %v, %v", first, err)
	}
	if vs, _, err := s.ListVaults(ctx, "", 10); err != nil || len(vs) != 1 || vs[0].Name != "ci" {
		t.Fatalf("vaults %+v, %v", vs, err)
	}
}

// checkSlackMidTurn finds the Slack session a release's data directory
// left mid-turn under run_old (its delivery's dedupe key, its turn, the
// mark for its sink) and its sink position at seq, with the intent of the
// post after it unconfirmed.
func checkSlackMidTurn(t *testing.T, s *Store, seq uint64) {
	t.Helper()
	ctx := t.Context()
	slack, err := s.SessionByKey(ctx, "slack:T1:C1:1700000000.000100")
	if err != nil || slack.ID != "ses_slack" || slack.TurnID != "turn_slack_1" {
		t.Fatalf("slack session %+v, %v", slack, err)
	}
	dup, err := s.CreateSession(ctx, core.NewSession{ExternalKey: slack.Origin.Key, Inputs: []core.Event{message("hi")}, Dedupe: []string{"slack:event:Ev1"}})
	if err != nil || !dup.Duplicate {
		t.Fatalf("a delivery seen by the release: %+v, %v", dup, err)
	}
	open, err := s.OpenTurns(ctx)
	if err != nil || open["ses_slack"] != "run_old" {
		t.Fatalf("open turns %v, %v", open, err)
	}
	active, err := s.ActiveSinkSessions(ctx, "slack")
	if err != nil || !slices.Equal(active, []string{"ses_slack"}) {
		t.Fatalf("marked for the slack sink: %v, %v", active, err)
	}
	pos, err := s.SinkPosition(ctx, "slack", "ses_slack")
	var st struct {
		Intent struct {
			Key string `json:"key"`
			At  int64  `json:"at"`
		} `json:"intent"`
	}
	if err != nil || pos.Seq != seq || json.Unmarshal(pos.State, &st) != nil || st.Intent.Key != fmt.Sprintf("ses_slack:%d:1", seq+1) || st.Intent.At == 0 {
		t.Fatalf("slack sink position %+v (%s), %v", pos, pos.State, err)
	}
}

func message(text string) core.Event {
	b, _ := json.Marshal(core.MessageBody{Text: text})
	return core.NewInput(core.TypeUserMessage, b)
}

// openRelease1 opens a copy of the first release's data directory.
func openRelease1(t *testing.T) *Store { return openRelease(t, "release1", Options{}) }

// openRelease opens a copy of the data directory testdata/dir.
func openRelease(t *testing.T, dir string, opts Options) *Store {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("testdata", dir, "switchboard.db"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "switchboard.db")
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// TestListsADataDirOfTheFirstRelease finds the sessions of a file written
// before the filter buckets existed by provider and by first message:
// Open built them.
func TestListsADataDirOfTheFirstRelease(t *testing.T) {
	s := openRelease1(t)
	tests := []struct {
		f    core.SessionFilter
		want []string
	}{
		{core.SessionFilter{Provider: "slack"}, []string{"ses_slack"}},
		{core.SessionFilter{Provider: core.ProviderAPI}, []string{"ses_api"}},
		{core.SessionFilter{Text: "HELLO"}, []string{"ses_api"}},
		{core.SessionFilter{Text: "fix"}, []string{"ses_linear"}},
		// Queued after its first message, which is in the log.
		{core.SessionFilter{Text: "still there"}, nil},
	}
	for _, tc := range tests {
		l, err := s.ListSessions(t.Context(), tc.f)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, sess := range l.Sessions {
			got = append(got, sess.ID)
		}
		if !slices.Equal(got, tc.want) {
			t.Fatalf("%+v listed %v, want %v", tc.f, got, tc.want)
		}
	}
	// Built once: a session created now is indexed by its own write.
	if _, err := s.CreateSession(t.Context(), core.NewSession{Session: core.Session{ID: "ses_new", Tenant: "t"}, Inputs: []core.Event{message("hello again")}}); err != nil {
		t.Fatal(err)
	}
	if l, err := s.ListSessions(t.Context(), core.SessionFilter{Text: "hello", Tenant: "t"}); err != nil || len(l.Sessions) != 1 {
		t.Fatalf("new session: %+v, %v", l, err)
	}
}
