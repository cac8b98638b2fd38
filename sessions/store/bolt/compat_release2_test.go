package bolt

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/oauth"
)

// release2 is what testdata/release2 was written with: its clock, fixed,
// and the master key its sealed values were sealed under.
var release2 = struct {
	now       time.Time
	masterKey string
}{time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC), "release two test master key, not for production"}

// TestOpensADataDirOfTheSecondRelease opens a data directory the second
// release wrote (testdata/release2, one record of every kind it kept) and
// finds everything, in the encodings it kept them in; writing to it goes
// on from where it was. Its clock runs on from the release's, so what
// counts by the hour adds to what was counted.
func TestOpensADataDirOfTheSecondRelease(t *testing.T) {
	later := release2.now.Add(time.Minute)
	s := openRelease(t, "release2", Options{Now: func() time.Time { return later }})
	sealer, err := oauth.NewSealer(release2.masterKey)
	if err != nil {
		t.Fatal(err)
	}
	t.Run("agents, skills, memory, environments", func(t *testing.T) { release2Agents(t, s) })
	t.Run("sessions and logs", func(t *testing.T) { release2Sessions(t, s) })
	t.Run("platform sessions, links, sinks, attachments", func(t *testing.T) { release2Platform(t, s) })
	t.Run("destinations, installations, vaults, keys", func(t *testing.T) { release2Sealed(t, s, sealer) })
	t.Run("schedules, console, counters", func(t *testing.T) { release2Rest(t, s, later) })
}

func release2Agents(t *testing.T, s *Store) {
	ctx := t.Context()
	a, err := s.GetAgent(ctx, "default")
	if err != nil || a.Version != 2 || a.Model != "anthropic/claude-test-2" || len(a.Skills) != 1 || a.Skills[0].Version != 1 || len(a.MemoryStores) != 1 {
		t.Fatalf("agent %+v, %v", a, err)
	}
	if v1, err := s.GetAgentVersion(ctx, a.ID, 1); err != nil || v1.Model != "anthropic/claude-test" {
		t.Fatalf("agent version 1 %+v, %v", v1, err)
	}
	sk, err := s.GetSkill(ctx, "pdf", 0)
	if err != nil || sk.ID != a.Skills[0].ID || len(sk.Files) != 2 {
		t.Fatalf("skill %+v, %v", sk, err)
	}
	if f, err := s.SkillFile(ctx, sk.ID, 1, "scripts/read.sh"); err != nil || string(f) != "#!/bin/sh\npdftotext \"$1\" -\n" {
		t.Fatalf("skill file %q, %v", f, err)
	}
	next, err := s.UpdateSkill(ctx, "pdf", core.SkillUpload{Name: "pdf", Description: "Reads PDF files.", Files: map[string][]byte{
		"SKILL.md": []byte("---\nname: pdf\ndescription: Reads PDF files.\n---\nUse pdftotext.\n"),
	}})
	if err != nil || next.Version != 2 {
		t.Fatalf("skill update %+v, %v", next, err)
	}
	if _, err := s.UpdateAgent(ctx, a.ID, 2, func(a *core.Agent) error { a.System = "be briefer"; return nil }); err != nil {
		t.Fatal(err)
	}
	m, err := s.GetMemoryStore(ctx, "notes")
	if err != nil || m.ID != a.MemoryStores[0].ID {
		t.Fatalf("memory store %+v, %v", m, err)
	}
	hist, err := s.MemoryHistory(ctx, m.ID, "default", "deploys.md")
	if err != nil || len(hist) != 2 {
		t.Fatalf("memory history %+v, %v", hist, err)
	}
	if f, err := s.MemoryFile(ctx, m.ID, "default", "deploys.md", 0); err != nil || f.Version != 2 || f.Content != "deploys on fridays: never" {
		t.Fatalf("memory file %+v, %v", f, err)
	}
	written, err := s.ChangeMemory(ctx, core.MemoryChange{Store: m.ID, Partition: "default", Op: core.MemoryOpWrite, Path: "deploys.md", Content: "ask first", By: "admin"})
	if err != nil || len(written) != 1 || written[0].Version != 3 {
		t.Fatalf("memory write %+v, %v", written, err)
	}
	if e, err := s.GetEnvironment(ctx, "python"); err != nil || !core.HasPrefix(e.ID, core.PrefixEnvironment) {
		t.Fatalf("environment %+v, %v", e, err)
	}
}

func release2Sessions(t *testing.T, s *Store) {
	ctx := t.Context()
	api, err := s.GetSession(ctx, "ses_api")
	if err != nil || api.Status != core.StatusQueued || api.Usage.OutputTokens != 10 || api.Metadata["k"] != "v" ||
		api.Limits == nil || api.Limits.MaxSessionTokens != 100000 || api.Result == nil || api.Result.Text != "done again" {
		t.Fatalf("api session %+v, %v", api, err)
	}
	evs, err := s.Events(ctx, "ses_api", 0, 0)
	if err != nil || len(evs) != 11 || evs[10].Seq != 11 {
		t.Fatalf("api log: %d events, %v", len(evs), err)
	}
	if pending, err := s.Pending(ctx, "ses_api"); err != nil || len(pending) != 1 || textOf(pending[0]) != "still there?" {
		t.Fatalf("pending %+v, %v", pending, err)
	}
	// Keys written then still answer: replays of both.
	res, err := s.QueueInputs(ctx, "ses_api", core.QueueRequest{Inputs: []core.Event{message("again")}, Idempotency: &core.Idempotency{Key: "api:events:ses_api:k2", Hash: "h2"}})
	if err != nil || string(res.Replay) != `{"data":[]}` {
		t.Fatalf("idempotent replay %+v, %v", res, err)
	}
	created, err := s.CreateSession(ctx, core.NewSession{Inputs: []core.Event{message("hello there")}, Idempotency: &core.Idempotency{Key: "api:sessions:k1", Hash: "h1"}})
	if err != nil || string(created.Replay) != `{"id":"ses_api"}` {
		t.Fatalf("create replay %+v, %v", created, err)
	}
	fork, err := s.GetSession(ctx, "ses_fork")
	if err != nil || fork.ForkedFrom == nil || fork.ForkedFrom.Session != "ses_api" || fork.Status != core.StatusIdle {
		t.Fatalf("fork %+v, %v", fork, err)
	}
	forked, err := s.Events(ctx, "ses_fork", 0, 0)
	if err != nil || uint64(len(forked)) != fork.ForkedFrom.Seq || forked[len(forked)-1].Type != core.TypeStatusChanged {
		t.Fatalf("fork log: %d events, %v", len(forked), err)
	}
	// The API session's next turn goes on after its last seq.
	logged, err := s.Append(ctx, "ses_api", core.AppendRequest{TurnID: "turn_api_3", Holder: "run_new", TakeInputs: true, Events: []core.Event{
		core.NewEvent(core.TypeTurnStarted, core.LevelInternal, core.ActorSystem, struct{}{}),
	}})
	if err != nil || len(logged) != 2 || logged[0].Seq != 12 || textOf(logged[0]) != "still there?" {
		t.Fatalf("append after the upgrade: %+v, %v", logged, err)
	}
}

func release2Platform(t *testing.T, s *Store) {
	ctx := t.Context()
	checkSlackMidTurn(t, s, 4)
	if linked, err := s.SessionByKey(ctx, "github:acme/app#7"); err != nil || linked.ID != "ses_slack" || len(linked.Links) != 1 || linked.Status != core.StatusRunning {
		t.Fatalf("linked key %+v, %v", linked, err)
	}
	logged, err := s.Append(ctx, "ses_slack", core.AppendRequest{TurnID: "turn_slack_1", Events: []core.Event{
		core.NewEvent(core.TypeTurnCompleted, core.LevelInternal, core.ActorSystem, core.TurnCompletedBody{YieldReason: core.ReasonCompleted, Usage: core.Usage{InputTokens: 1}}),
	}})
	if err != nil || logged[0].Seq != 6 {
		t.Fatalf("append after the upgrade: %+v, %v", logged, err)
	}
	if ok, err := s.ReleaseSink(ctx, "slack", "ses_slack", 6); err != nil || !ok {
		t.Fatalf("release: %v, %v", ok, err)
	}
	gh, err := s.ListSessions(ctx, core.SessionFilter{Provider: "github", Text: "TRACE"})
	if err != nil || len(gh.Sessions) != 1 || gh.Sessions[0].ID != "ses_github" {
		t.Fatalf("github sessions %+v, %v", gh, err)
	}
	evs, err := s.Events(ctx, "ses_github", 0, 1)
	var msg core.MessageBody
	if err != nil || len(evs) != 1 || evs[0].Decode(&msg) != nil || len(msg.Attachments) != 1 {
		t.Fatalf("github input %+v, %v", evs, err)
	}
	if data, err := s.GetAttachment(ctx, msg.Attachments[0].ID); err != nil || string(data) != "panic: at line 3\n" {
		t.Fatalf("attachment %q, %v", data, err)
	}
}

func release2Sealed(t *testing.T, s *Store, sealer *oauth.Sealer) {
	ctx := t.Context()
	// The release's delivery (of seq 9) first, whatever the other tests
	// appended since.
	ds, _, err := s.ListDeliveries(ctx, core.DeliveryQuery{SessionID: "ses_api", Limit: 1})
	if err != nil || len(ds) != 1 || ds[0].State != core.DeliveryPending || ds[0].Seq != 9 {
		t.Fatalf("deliveries %+v, %v", ds, err)
	}
	due, _, err := s.ClaimDeliveries(ctx, "run_a", time.Minute, time.Now(), 10)
	if err != nil || len(due) != 1 || due[0].ID != ds[0].ID {
		t.Fatalf("due deliveries %+v, %v", due, err)
	}
	sealed, err := s.DestinationSecret(ctx, ds[0].DestinationID)
	if secret, oerr := sealer.Open(sealed, []byte(ds[0].DestinationID)); err != nil || oerr != nil || string(secret) != "whsec_test" {
		t.Fatalf("destination secret %q, %v, %v", secret, err, oerr)
	}
	in, err := s.FindInstallation(ctx, "slack", "T1")
	if err != nil || !in.HasToken || in.Name != "Acme" || in.TokenExpiresAt == nil || in.Metadata["bot_user_id"] != "U0BOT" {
		t.Fatalf("installation %+v, %v", in, err)
	}
	sealed, err = s.InstallationTokens(ctx, in.ID)
	var tokens oauth.TokenSet
	if raw, oerr := sealer.Open(sealed, core.InstallationAAD("slack", "T1")); err != nil || oerr != nil || json.Unmarshal(raw, &tokens) != nil || tokens.AccessToken != "xoxb-release2" {
		t.Fatalf("tokens %+v, %v, %v", tokens, err, oerr)
	}
	if first, err := s.Once(ctx, "oauth:state:n1", time.Now().Add(time.Hour)); err != nil || first {
		t.Fatalf("a single-use key of the second release used again: %v, %v", first, err)
	}
	vs, _, err := s.ListVaults(ctx, "", 10)
	if err != nil || len(vs) != 1 || vs[0].Name != "ci" {
		t.Fatalf("vaults %+v, %v", vs, err)
	}
	creds, err := s.ListCredentials(ctx, vs[0].ID)
	if err != nil || len(creds) != 1 {
		t.Fatalf("credentials %+v, %v", creds, err)
	}
	c, sealed, err := s.GetCredential(ctx, creds[0].ID)
	var secret core.CredentialSecret
	if raw, oerr := sealer.Open(sealed, []byte(c.ID)); err != nil || oerr != nil || json.Unmarshal(raw, &secret) != nil || secret.Token != "ghp_release2" {
		t.Fatalf("credential %+v, %v, %v", c, err, oerr)
	}
}

func release2Rest(t *testing.T, s *Store, now time.Time) {
	ctx := t.Context()
	scs, _, err := s.ListSchedules(ctx, core.ScheduleQuery{Session: "ses_api"})
	if err != nil || len(scs) != 1 || scs[0].NextAt == nil || !scs[0].NextAt.Equal(release2.now.Add(time.Hour)) {
		t.Fatalf("schedules %+v, %v", scs, err)
	}
	dueAt := release2.now.Add(time.Hour)
	if due, err := s.DueSchedules(ctx, dueAt, 0); err != nil || len(due) != 1 {
		t.Fatalf("due schedules %+v, %v", due, err)
	}
	next := dueAt.Add(time.Hour)
	f, err := s.FireSchedule(ctx, scs[0].ID, dueAt, &next, nil)
	if err != nil || !f.Fired || f.Schedule.Fires != 1 || f.Session.ID != "ses_api" {
		t.Fatalf("fire %+v, %v", f, err)
	}
	if cs, err := s.GetConsoleSession(ctx, "cs_release2", now); err != nil || cs.CSRF != "csrf-2" {
		t.Fatalf("console sign-in %+v, %v", cs, err)
	}
	if n, err := s.SignInFailures(ctx, "192.0.2.9", now, time.Hour); err != nil || n != 1 {
		t.Fatalf("sign-in failures %d, %v", n, err)
	}
	// The three turns the release counted in its hour, and the one the
	// platform test finished in the same hour.
	hours, err := s.HourlyStats(ctx, release2.now, release2.now.Add(time.Hour))
	if err != nil || len(hours) != 1 || hours[0].Turns != 4 || hours[0].OutputTokens != 15 || hours[0].InputTokens != 31 {
		t.Fatalf("hourly stats %+v, %v", hours, err)
	}
}

// textOf is the text of a user.message.
func textOf(e core.Event) string {
	var b core.MessageBody
	_ = e.Decode(&b)
	return b.Text
}
