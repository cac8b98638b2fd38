package github

import (
	"encoding/json"
	"testing"

	gh "github.com/google/go-github/v62/github"
	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/providers/output"
)

// TestCheckRunOnce renders the event that creates a check run twice, as
// the sink does after a crash between the create and the recorded
// position (the state from before the event): one run is made, and the
// second render adopts it. Another event (a later turn) makes its own.
func TestCheckRunOnce(t *testing.T) {
	r := newInstallRig(t, nil)
	const sha = "89abcdef0123456789abcdef0123456789abcdef"
	s := &core.Session{ID: "ses_checkrun", Origin: &core.Origin{Provider: Name, Key: sessionKey("acme", "widgets", 7), TenantID: "900"}}
	g := &ref{Kind: kindLabel, Installation: 900, Owner: "acme", Repo: "widgets", Number: 7, PR: true, HeadSHA: sha, Login: "alice"}
	input := func(seq uint64) core.Event {
		body, _ := json.Marshal(inputBody{Text: "go", GitHub: g})
		e := core.NewInput(core.TypeUserMessage, body)
		e.Seq = seq
		return e
	}
	stateOf := func(th *output.Thread) sinkState {
		var st sinkState
		if err := json.Unmarshal(th.State, &st); err != nil {
			t.Fatal(err)
		}
		return st
	}
	runs := func() []int64 {
		var ids []int64
		for _, cr := range r.fake.CheckRuns() {
			ids = append(ids, cr.ID)
		}
		return ids
	}
	rd := r.p.Renderer()
	sink := output.New(output.Config{Name: Name, Store: r.store, Renderer: rd})
	var made int64
	for i := range 2 {
		// The second render starts from the position the store kept: the
		// intent saved before the first render's create.
		pos, err := r.store.SinkPosition(t.Context(), Name, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		th := sink.Thread(s, pos)
		if _, err := rd.Render(t.Context(), th, input(3)); err != nil {
			t.Fatalf("render %d: %v", i, err)
		}
		ids := runs()
		if len(ids) != 1 {
			t.Fatalf("render %d: check runs %v, want one", i, ids)
		}
		if made = ids[0]; stateOf(th).CheckRun != made {
			t.Fatalf("render %d recorded run %d, want %d", i, stateOf(th).CheckRun, made)
		}
	}
	if cr := r.fake.CheckRuns()[0]; cr.ExternalID != s.Origin.Key+"@3" || cr.HeadSHA != sha || cr.Name != r.fake.Slug {
		t.Fatalf("check run %+v", cr)
	}

	// A turn that starts with no run (the one before completed) makes one
	// at turn.started, also once.
	prior, _ := json.Marshal(sinkState{Reply: g})
	if err := r.store.SaveSinkPosition(t.Context(), Name, s.ID, core.Claim{}, core.SinkPosition{Seq: 8, State: prior}); err != nil {
		t.Fatal(err)
	}
	started := core.NewEvent(core.TypeTurnStarted, core.LevelInternal, core.ActorSystem, struct{}{})
	started.Seq = 9
	for i := range 2 {
		pos, err := r.store.SinkPosition(t.Context(), Name, s.ID)
		if err != nil {
			t.Fatal(err)
		}
		th := sink.Thread(s, pos)
		if _, err := rd.Render(t.Context(), th, started); err != nil {
			t.Fatalf("turn.started %d: %v", i, err)
		}
	}
	all := r.fake.CheckRuns()
	if len(all) != 2 || all[1].ExternalID != s.Origin.Key+"@9" || all[1].Status != "in_progress" {
		t.Fatalf("check runs after a second turn: %+v", all)
	}
}

// TestStopFindsSession: the Stop button's check run names the session in
// its external id, with or without an intent.
func TestStopFindsSession(t *testing.T) {
	id := identity{slug: "sb-agent", label: "sb-agent"}
	for _, ext := range []string{"github:acme/widgets#7@12", "github:acme/widgets#7"} {
		ev := &gh.CheckRunEvent{Action: gh.String("requested_action"), RequestedAction: &gh.RequestedAction{Identifier: stopAction},
			CheckRun: &gh.CheckRun{ExternalID: gh.String(ext)}, Installation: &gh.Installation{ID: gh.Int64(900)}, Sender: &gh.User{Login: gh.String("alice")}}
		if d := decide(ev, id); d.act != actInterrupt || d.key != "github:acme/widgets#7" {
			t.Errorf("%s: decision %v %q (%s)", ext, d.act, d.key, d.why)
		}
	}
}
