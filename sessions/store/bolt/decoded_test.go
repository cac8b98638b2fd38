package bolt

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/switchboardhq/switchboard/core"
)

// TestDecodedInstallationsFollowWrites: reads answered from the decoded
// records see every write to them, and each answer is the reader's own:
// changing it changes neither the store nor the next answer.
func TestDecodedInstallationsFollowWrites(t *testing.T) {
	ctx := context.Background()
	s := fresh(t)
	saved, err := s.SaveInstallation(ctx, &core.Installation{Provider: "slack", ExternalID: "T1", Name: "Acme",
		Policy: core.AccessPolicy{Channels: []string{"C1"}}, Metadata: map[string]string{"bot_user_id": "U0BOT"}}, []byte("sealed"), nil)
	if err != nil {
		t.Fatal(err)
	}
	find := func() *core.Installation {
		t.Helper()
		in, err := s.FindInstallation(ctx, "slack", "T1")
		if err != nil {
			t.Fatal(err)
		}
		byID, err := s.GetInstallation(ctx, saved.ID)
		if err != nil {
			t.Fatal(err)
		}
		if byID.Name != in.Name || !slices.Equal(byID.Policy.Channels, in.Policy.Channels) || byID.HasToken != in.HasToken {
			t.Fatalf("by id %+v, by tenant %+v", byID, in)
		}
		return in
	}
	find() // the first read decodes; the next is answered from what it kept
	first := find()
	// The reader's copy is its own.
	first.Policy.Channels[0] = "C9"
	first.Metadata["bot_user_id"] = "changed"
	first.Name = "changed"
	if again := find(); again.Policy.Channels[0] != "C1" || again.Metadata["bot_user_id"] != "U0BOT" || again.Name != "Acme" {
		t.Fatalf("a reader's change reached the store's answers: %+v", again)
	}
	// Every write path is seen by the next read.
	if _, err := s.UpdateInstallation(ctx, saved.ID, func(in *core.Installation) error {
		in.Policy.Channels = []string{"C2", "C3"}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if got := find(); !slices.Equal(got.Policy.Channels, []string{"C2", "C3"}) {
		t.Fatalf("after the update: %+v", got.Policy)
	}
	if err := s.ForgetInstallationTokens(ctx, saved.ID); err != nil {
		t.Fatal(err)
	}
	if got := find(); got.HasToken {
		t.Fatal("tokens forgotten, yet the installation still has them")
	}
	if _, err := s.SaveInstallation(ctx, &core.Installation{Provider: "slack", ExternalID: "T1", Name: "Acme Corp"}, []byte("sealed again"), nil); err != nil {
		t.Fatal(err)
	}
	if got := find(); got.Name != "Acme Corp" || !got.HasToken {
		t.Fatalf("after a reinstall: %+v", got)
	}
	if err := s.DeleteInstallation(ctx, saved.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetInstallation(ctx, saved.ID); err == nil {
		t.Fatal("a deleted installation is still found")
	}
}

// TestDecodedDestinationsFollowWrites: a destination read again is
// answered from what the first read decoded, sees every write (a pause,
// a resume, a delete), and is the reader's own to change.
func TestDecodedDestinationsFollowWrites(t *testing.T) {
	ctx := context.Background()
	s := fresh(t)
	created, err := s.CreateDestination(ctx, core.NewDestination{Destination: core.Destination{
		ID: core.NewID(core.PrefixDestination), URL: "https://hooks.example.com/in", Level: core.LevelUser,
		Types: []string{core.TypeAgentMessage},
	}})
	if err != nil {
		t.Fatal(err)
	}
	get := func() *core.Destination {
		t.Helper()
		d, err := s.GetDestination(ctx, created.ID)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	get() // the first read decodes; the next is answered from what it kept
	first := get()
	if len(s.destinations.entries) != 1 {
		t.Fatalf("%d destinations kept decoded after two reads, want 1", len(s.destinations.entries))
	}
	first.Types[0] = "changed"
	first.Status = core.DestinationPaused
	if again := get(); again.Types[0] != core.TypeAgentMessage || again.Status != core.DestinationActive {
		t.Fatalf("a reader's change reached the store's answers: %+v", again)
	}
	if _, err := s.PauseDestination(ctx, created.ID); err != nil {
		t.Fatal(err)
	}
	if got := get(); got.Status != core.DestinationPaused || got.PausedAt == nil {
		t.Fatalf("after the pause: %+v", got)
	}
	if _, err := s.ResumeDestination(ctx, created.ID); err != nil {
		t.Fatal(err)
	}
	if got := get(); got.Status != core.DestinationActive || got.PausedAt != nil {
		t.Fatalf("after the resume: %+v", got)
	}
	if err := s.DeleteDestination(ctx, created.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetDestination(ctx, created.ID); !errors.Is(err, core.ErrNotFound) {
		t.Fatalf("a deleted destination: %v", err)
	}
}
