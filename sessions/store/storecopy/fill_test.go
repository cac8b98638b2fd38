package storecopy_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/switchboardhq/switchboard/core"
	"github.com/switchboardhq/switchboard/sessions/store/backend"
)

// fakeKeys seals by framing: its "ciphertext" names the key and the aad,
// so a value opens only with the key and aad it was sealed with.
type fakeKeys struct{ name string }

func (k fakeKeys) Seal(plaintext, aad []byte) ([]byte, error) {
	return fmt.Appendf(nil, "%s|%s|%s", k.name, aad, plaintext), nil
}

func (k fakeKeys) Open(sealed, aad []byte) ([]byte, error) {
	prefix := fmt.Appendf(nil, "%s|%s|", k.name, aad)
	if !bytes.HasPrefix(sealed, prefix) {
		return nil, errors.New("message authentication failed")
	}
	return sealed[len(prefix):], nil
}

func (k fakeKeys) KeyCheck() string { return "check-" + k.name }

// clock is a store's clock that the test moves.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// attachedPNG is the bytes of the Slack mention's screenshot.
const attachedPNG = "\x89PNG\r\n\x1a\nnot really an image"

func text(s string) core.Event {
	return core.NewInput(core.TypeUserMessage, json.RawMessage(fmt.Sprintf(`{"text":%q}`, s)))
}

func internal(typ string, body any) core.Event {
	return core.NewEvent(typ, core.LevelInternal, core.ActorSystem, body)
}

// fill writes a store with records of every kind through its contract: a
// versioned agent; an API session with an answered turn and an
// idempotency key; Slack, GitHub and Linear sessions with origin keys and
// dedupe keys; one with queued inputs; one with an open turn waiting on a
// tool call; an archived one, whose turn failed an hour before the
// others (two hours of counters); a wake; vaults with sealed credentials;
// environments; installations with and without tokens; a once key;
// destinations (one paused) with delivered, failed and pending
// deliveries; sink positions; skills with versions and files, pinned by
// an agent; memory stores, one shared, with pruned, deleted and empty
// files.
func fill(t *testing.T, s backend.Store, keys fakeKeys, clk *clock) {
	ctx := t.Context()
	tick := func() { clk.t = clk.t.Add(time.Second) }
	fillMemory(t, s, tick)
	agent, err := s.CreateAgent(ctx, &core.Agent{Name: "helper", Model: "anthropic/claude-x", System: "be brief"})
	must(t, err)
	_, err = s.UpdateAgent(ctx, agent.ID, 1, func(a *core.Agent) error { a.System = "be briefer"; return nil })
	must(t, err)
	other, err := s.CreateAgent(ctx, &core.Agent{Name: "other", Model: "openai/gpt-x", System: "s",
		MemoryStores: []core.MemoryStoreRef{{ID: "notes"}, {ID: "team", Access: core.MemoryReadOnly}}})
	must(t, err)

	global := core.NewID(core.PrefixDestination)
	sealed, err := keys.Seal([]byte("whsec_global"), []byte(global))
	must(t, err)
	_, err = s.CreateDestination(ctx, core.NewDestination{Destination: core.Destination{ID: global, URL: "https://hooks.example.com/all", Level: core.LevelUser}, SealedSecret: sealed})
	must(t, err)
	failing := core.NewID(core.PrefixDestination)
	_, err = s.CreateDestination(ctx, core.NewDestination{Destination: core.Destination{ID: failing, URL: "https://hooks.example.com/down", AgentID: agent.ID, Types: []string{core.TypeAgentMessage}}})
	must(t, err)

	create := func(req core.NewSession) *core.Session {
		t.Helper()
		tick()
		if req.Session.Agent.ID == "" {
			req.Session.Agent = core.AgentRef{ID: agent.ID, Version: 2}
		}
		res, err := s.CreateSession(ctx, req)
		must(t, err)
		return res.Session
	}
	turn := func(id, turnID string, events ...core.Event) {
		t.Helper()
		tick()
		_, err := s.Append(ctx, id, core.AppendRequest{TakeInputs: true, TurnID: turnID, Holder: "rt_a", Events: append([]core.Event{internal(core.TypeTurnStarted, struct{}{})}, events...)})
		must(t, err)
	}
	answered := func(id, turnID, answer string) {
		t.Helper()
		turn(id, turnID, core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorAgent, core.MessageBody{Text: answer}),
			internal(core.TypeTurnCompleted, core.TurnCompletedBody{YieldReason: core.ReasonCompleted, Usage: core.Usage{InputTokens: 10, OutputTokens: 3}}))
	}

	api := create(core.NewSession{Session: core.Session{Metadata: map[string]string{"ticket": "42"}, Tenant: "customer:acme", ClientTokenHash: "hash-of-token"},
		Inputs: []core.Event{text("hello")}, Idempotency: &core.Idempotency{Key: "api:sessions:k1", Hash: "h1", Answer: []byte(`{"id":"first answer"}`)}})
	answered(api.ID, "turn_api", "hi there")
	// A person follows it from their editor; an earlier token was revoked.
	for _, person := range []string{"Ada Lovelace", "Grace Hopper"} {
		_, err := s.CreateAttachToken(ctx, core.AttachToken{ID: core.NewID(core.PrefixAttachToken), SessionID: api.ID, Person: person, IssuedBy: core.IssuedByAdmin, Hash: "hash-of-" + person})
		must(t, err)
	}
	if tokens, err := s.ListAttachTokens(ctx, api.ID); err != nil || len(tokens) != 2 {
		t.Fatalf("attach tokens %+v (%v)", tokens, err)
	} else if _, err := s.RevokeAttachToken(ctx, api.ID, tokens[0].ID, core.IssuedByAdmin); err != nil {
		t.Fatal(err)
	}

	for _, o := range []core.Origin{
		{Provider: "slack", Key: "slack:T1:C1:1700000000.000100", TenantID: "T1", URL: "https://t1.slack.com/archives/C1/p1700000000000100"},
		{Provider: "github", Key: "github:acme/app#7", TenantID: "acme/app"},
		{Provider: "linear", Key: "linear:org1:ISS-3", TenantID: "org1"},
	} {
		input := text("@bot help " + o.Provider)
		if o.Provider == "slack" {
			// The mention came with a screenshot.
			att, err := s.PutAttachment(ctx, core.Attachment{Name: "shot.png", MediaType: "image/png", Kind: core.AttachmentImage}, []byte(attachedPNG))
			must(t, err)
			raw, err := json.Marshal(core.MessageBody{Text: "@bot help slack", Attachments: []core.Attachment{att}})
			must(t, err)
			input = core.NewInput(core.TypeUserMessage, raw)
		}
		sess := create(core.NewSession{Session: core.Session{Agent: core.AgentRef{ID: other.ID, Version: 1}, Origin: &o, Tenant: o.Provider + ":" + o.TenantID}, ExternalKey: o.Key,
			Inputs: []core.Event{input}, Dedupe: []string{o.Provider + ":delivery-1"}})
		answered(sess.ID, "turn_"+o.Provider, "on it")
		must(t, s.SaveSinkPosition(ctx, o.Provider, sess.ID, core.Claim{}, core.SinkPosition{Seq: 2, State: json.RawMessage(`{"ts":"1700000000.000200"}`)}))
		if o.Provider == "linear" {
			// The pull request its agent opened routes to it too.
			_, err := s.AddLink(ctx, sess.ID, core.LinkBody{Key: "github:acme/app#70", By: core.LinkedByAgent, URL: "https://github.com/acme/app/pull/70"})
			must(t, err)
		}
	}

	queued := create(core.NewSession{Inputs: []core.Event{text("one")}})
	_, err = s.QueueInputs(ctx, queued.ID, core.QueueRequest{Inputs: []core.Event{text("two"), core.NewInput(core.TypeUserInterrupt, nil), text("three")},
		Idempotency: &core.Idempotency{Key: "api:events:k2", Hash: "h2", Answer: []byte(`{"data":[]}`)}})
	must(t, err)
	must(t, s.ScheduleWake(ctx, queued.ID, clk.t.Add(time.Hour)))

	open := create(core.NewSession{Inputs: []core.Event{text("run the tests")}})
	turn(open.ID, "turn_open", core.NewEvent(core.TypeAgentToolUse, core.LevelProgress, core.ActorAgent,
		core.ToolUseBody{ToolUseID: "toolu_1", Name: "bash", Input: json.RawMessage(`{"command":"go test ./..."}`)}))

	// Its turn failed, and its turn.completed carries a time an hour
	// before the others': two hours of counters.
	gone := create(core.NewSession{Inputs: []core.Event{text("bye")}})
	failed := internal(core.TypeTurnCompleted, core.TurnCompletedBody{YieldReason: core.ReasonError, Usage: core.Usage{InputTokens: 4, OutputTokens: 1}})
	failed.CreatedAt = core.NewTime(clk.t.Add(-time.Hour))
	turn(gone.ID, "turn_gone", core.NewEvent(core.TypeAgentMessage, core.LevelUser, core.ActorAgent, core.MessageBody{Text: "bye"}), failed)
	_, err = s.Archive(ctx, gone.ID)
	must(t, err)

	// One delivery of each state: the global destination's first is
	// delivered, the failing one's first is retried, then paused.
	ds, _, err := s.ClaimDeliveries(ctx, "fill", time.Hour, clk.t.Add(time.Minute), 100)
	must(t, err)
	for _, d := range ds {
		tick()
		res := core.AttemptResult{Attempt: core.Attempt{At: core.NewTime(clk.t), StatusCode: 200, LatencyMS: 12}, Success: true}
		if d.DestinationID == failing {
			res = core.AttemptResult{Attempt: core.Attempt{At: core.NewTime(clk.t), StatusCode: 503, LatencyMS: 40, Error: "unavailable"},
				RetryAt: clk.t.Add(time.Minute), PauseAfter: time.Second}
		}
		_, _, err := s.RecordAttempt(ctx, d.Claim, d.ID, res)
		must(t, err)
	}

	clk.t = clk.t.Add(2 * time.Minute)
	ds, _, err = s.ClaimDeliveries(ctx, "fill", time.Hour, clk.t, 100)
	must(t, err)
	for _, d := range ds {
		if d.DestinationID == failing {
			_, _, err := s.RecordAttempt(ctx, d.Claim, d.ID, core.AttemptResult{Attempt: core.Attempt{At: core.NewTime(clk.t), StatusCode: 500, Error: "still down"},
				RetryAt: clk.t.Add(time.Minute), PauseAfter: time.Second})
			must(t, err)
		}
	}
	must(t, s.ReleaseDeliveryClaims(ctx, "fill"))
	if d, err := s.GetDestination(ctx, failing); err != nil || d.Status != core.DestinationPaused {
		t.Fatalf("the failing destination = %+v, %v; want it paused", d, err)
	}

	vault, err := s.CreateVault(ctx, &core.Vault{Name: "team"})
	must(t, err)
	_, err = s.CreateVault(ctx, &core.Vault{Name: "empty"})
	must(t, err)
	for _, name := range []string{"github", "npm"} {
		c := &core.Credential{ID: core.NewID(core.PrefixCredential), VaultID: vault.ID, Name: name, Kind: core.CredentialStaticBearer, Hosts: []string{name + ".example.com"}}
		sealed, err := keys.Seal([]byte(`{"token":"secret-`+name+`"}`), []byte(c.ID))
		must(t, err)
		_, err = s.PutCredential(ctx, c, sealed)
		must(t, err)
	}
	_, err = s.CreateEnvironment(ctx, &core.Environment{Name: "go", Image: "golang:1", Env: map[string]string{"GOFLAGS": "-mod=mod"}})
	must(t, err)
	for _, in := range []core.Installation{{Provider: "slack", ExternalID: "T1", Name: "acme"}, {Provider: "github", ExternalID: "99", Name: "acme"}, {Provider: "linear", ExternalID: "org1"}} {
		var sealed []byte
		if in.Provider != "linear" {
			sealed, err = keys.Seal([]byte(`{"access_token":"x"}`), core.InstallationAAD(in.Provider, in.ExternalID))
			must(t, err)
		}
		_, err := s.SaveInstallation(ctx, &in, sealed, core.NewTime(clk.t.Add(time.Hour)).Ptr())
		must(t, err)
	}
	_, err = s.Once(ctx, "oauth:state:nonce1", clk.t.Add(10*time.Minute))
	must(t, err)
	fillSkills(t, s, clk)
	fillSchedules(t, s, clk)
}

// fillSchedules writes a recurring schedule due in an hour and a one-off
// that fired already.
func fillSchedules(t *testing.T, s backend.Store, clk *clock) {
	ctx := t.Context()
	next := core.NewTime(clk.t.Add(time.Hour))
	_, err := s.CreateSchedule(ctx, &core.Schedule{Cron: "0 * * * *", TimeZone: "Europe/Berlin", NextAt: &next, CreatedBy: core.CreatedByAdmin,
		Target: core.ScheduleTarget{Agent: "agt_x", Input: "hourly", Tenant: "ops"}})
	must(t, err)
	fired := core.NewTime(clk.t.Add(-time.Hour))
	_, err = s.CreateSchedule(ctx, &core.Schedule{At: &fired, LastFiredAt: &fired, Fires: 1, CreatedBy: "ses_made_it",
		Target: core.ScheduleTarget{SessionID: "ses_made_it", Input: "follow up"}})
	must(t, err)
}

// fillSkills writes two skills, one in two versions that share a file,
// and pins versions of both on an agent.
func fillSkills(t *testing.T, s backend.Store, clk *clock) {
	ctx := t.Context()
	up := core.SkillUpload{
		Name: "lint", Description: "Lints the code.", Metadata: map[string]string{"team": "a"},
		Files: map[string][]byte{
			core.SkillManifestFile: []byte("---\nname: lint\ndescription: Lints the code.\n---\nRun scripts/lint.sh.\n"),
			"scripts/lint.sh":      []byte("#!/bin/sh\ngo vet ./...\n"),
			"empty.txt":            nil,
		},
		Executable: map[string]bool{"scripts/lint.sh": true},
	}
	lint, err := s.CreateSkill(ctx, up)
	must(t, err)
	clk.t = clk.t.Add(time.Second)
	up.Name, up.Files[core.SkillManifestFile] = "lint-strict", []byte("---\nname: lint-strict\ndescription: Lints.\n---\n")
	_, err = s.UpdateSkill(ctx, lint.ID, up)
	must(t, err)
	_, err = s.CreateSkill(ctx, core.SkillUpload{Name: "review", Description: "Reviews a change.",
		Files: map[string][]byte{core.SkillManifestFile: []byte("---\nname: review\ndescription: Reviews a change.\n---\n")}})
	must(t, err)
	_, err = s.CreateAgent(ctx, &core.Agent{Name: "skilled", Model: "anthropic/claude-x", System: "s",
		Skills: []core.SkillRef{{ID: lint.ID, Version: 1}, {ID: "review"}}})
	must(t, err)
}

// fillMemory writes two memory stores: in notes' slack:T1, a.md's first
// version is pruned (max_versions 2), b.md is deleted and empty.md is
// empty; team is shared.
func fillMemory(t *testing.T, s backend.Store, tick func()) {
	ctx := t.Context()
	notes, err := s.CreateMemoryStore(ctx, &core.MemoryStore{Name: "notes", Limits: core.MemoryLimits{MaxVersions: 2}})
	must(t, err)
	team, err := s.CreateMemoryStore(ctx, &core.MemoryStore{Name: "team", Shared: true, Metadata: map[string]string{"owner": "ops"}})
	must(t, err)
	for _, c := range []core.MemoryChange{
		{Store: notes.ID, Partition: "slack:T1", Op: core.MemoryOpWrite, Path: "a.md", Content: "one", SessionID: "ses_1", TurnID: "turn_1"},
		{Store: notes.ID, Partition: "slack:T1", Op: core.MemoryOpWrite, Path: "a.md", Content: "two"},
		{Store: notes.ID, Partition: "slack:T1", Op: core.MemoryOpWrite, Path: "a.md", Content: "three"},
		{Store: notes.ID, Partition: "slack:T1", Op: core.MemoryOpWrite, Path: "b.md", Content: "gone soon"},
		{Store: notes.ID, Partition: "slack:T1", Op: core.MemoryOpDelete, Path: "b.md", By: "admin"},
		{Store: notes.ID, Partition: "slack:T1", Op: core.MemoryOpWrite, Path: "empty.md"},
		{Store: team.ID, Partition: core.SharedPartition, Op: core.MemoryOpWrite, Path: "plans/q3.md", Content: "ship ✓"},
	} {
		tick()
		_, err := s.ChangeMemory(ctx, c)
		must(t, err)
	}
}
